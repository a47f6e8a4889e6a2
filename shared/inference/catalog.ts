import { readFileSync } from 'node:fs'
import { safeParse } from 'zod/mini'
import { config } from '#shared/config'
import { listModels } from '#shared/db/model-repository'
import { BadRequestError, misconfigured, NotFoundError, type ServiceUnavailableError } from '#shared/errors/http-error'
import { parseJsonFile } from '#shared/json-file'
import { logger } from '#shared/logger'
import { RefreshingCache } from '#shared/refreshing-cache'
import { type CatalogModel, CatalogModelSchema } from '#shared/schemas/model'

let fileModels: CatalogModel[] | undefined
const cache = new RefreshingCache<CatalogModel[]>({
  name: 'model catalog',
  ttlMs: () => config.inference.catalogCacheTtlMs,
  maxEntries: () => 1,
})

/** A catalog file that names one model id twice: which entry would win is not the file's author's to guess. */
export class DuplicateModelIdError extends Error {
  override readonly name = 'DuplicateModelIdError'
}

/**
 * Parses a catalog file's text: one model object or an array of them; throws with the first problem, a syntax error
 * as `JsonSyntaxError` with its line and column and none of the text (a pasted key may be in it), an id given twice
 * as `DuplicateModelIdError`.
 */
export function parseCatalogFile(text: string, source = 'models file'): CatalogModel[] {
  const raw = parseJsonFile(text, source)
  const items = Array.isArray(raw) ? raw : [raw]
  const models = items.map((item, index) => {
    const parsed = safeParse(CatalogModelSchema, item)
    if (parsed.success) return parsed.data
    const issue = parsed.error.issues[0]
    const at = [Array.isArray(raw) ? index : undefined, ...(issue?.path ?? [])].filter((p) => p !== undefined)
    throw new Error(`${source}: invalid model at ${at.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`)
  })
  const first = new Map<string, number>()
  for (const [index, model] of models.entries()) {
    const earlier = first.get(model.id)
    if (earlier !== undefined) {
      throw new DuplicateModelIdError(
        `${source}: model id \`${model.id}\` appears more than once (at ${earlier} and ${index})`,
      )
    }
    first.set(model.id, index)
  }
  return models
}

function modelsFromFile(): CatalogModel[] {
  if (fileModels === undefined) {
    const file = config.inference.modelsFile
    fileModels = file === undefined ? [] : readCatalogFile(file)
  }
  return fileModels
}

// A bad file fails every catalog read until it is fixed, like bad config, but with a 503 that says why rather than
// a bare 500. The answer names the variable, not the path; the log has both.
function readCatalogFile(file: string): CatalogModel[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw misconfiguredCatalog('LOOM_MODELS_FILE cannot be read', file, error)
  }
  try {
    return parseCatalogFile(text, 'LOOM_MODELS_FILE')
  } catch (error) {
    throw misconfiguredCatalog((error as Error).message, file, error)
  }
}

function misconfiguredCatalog(detail: string, file: string, cause: unknown): ServiceUnavailableError {
  logger.error('model catalog file unusable', { file, error: cause })
  return misconfigured(`The model catalog is misconfigured: ${detail}`, { cause })
}

// `background`: a refresh of the cached catalog, which no request waits for.
async function load(background: boolean): Promise<CatalogModel[]> {
  // Table entries override file entries with the same id: the CLI is how operators change a running catalog.
  const byId = new Map(modelsFromFile().map((m) => [m.id, m]))
  for (const model of await listModels({ background })) byId.set(model.id, model)
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id))
}

/** Every catalog model (table and config file), cached for `catalogCacheTtlMs` so the hot path rarely reads. */
export function allModels(now = Date.now()): Promise<CatalogModel[]> {
  return cache.get('catalog', load, now)
}

// The catalog itself when it is cached (no promise), else a promise of it.
function catalogNow(): CatalogModel[] | Promise<CatalogModel[]> {
  return cache.peek('catalog', load)
}

/** Forgets the cached catalog (tests, the CLI in the same process). */
export function clearCatalogCache(): void {
  cache.clear()
  fileModels = undefined
}

/** Whether an entity may use a model. */
export function mayUse(model: CatalogModel, entity: string): boolean {
  return model.entities.includes('*') || model.entities.includes(entity)
}

/** The models an entity may use, ordered by id. */
export async function modelsFor(entity: string): Promise<CatalogModel[]> {
  return (await allModels()).filter((m) => mayUse(m, entity))
}

/**
 * Resolves the request's `model` for an entity: unknown or not permitted → 404 (docs/inference.md §4.3); missing or
 * empty → the only model the entity may use, else 400 naming the choices.
 */
export function resolveModel(name: string | null | undefined, entity: string): CatalogModel | Promise<CatalogModel> {
  const catalog = catalogNow()
  return catalog instanceof Promise ? catalog.then((all) => pick(all, name, entity)) : pick(catalog, name, entity)
}

function pick(catalog: CatalogModel[], name: string | null | undefined, entity: string): CatalogModel {
  if (name !== undefined && name !== null && name !== '') {
    const model = catalog.find((m) => m.id === name)
    if (model === undefined || !mayUse(model, entity)) {
      throw new NotFoundError(`The model \`${name}\` does not exist.`, { param: 'model' })
    }
    return model
  }
  const models = catalog.filter((m) => mayUse(m, entity))
  if (models.length === 1 && models[0] !== undefined) return models[0]
  const names = models.map((m) => m.id).join(', ')
  throw new BadRequestError(
    models.length === 0
      ? 'The `model` field is required, and no model is available to this entity.'
      : `The \`model\` field is required when several models are available. Available models: ${names}.`,
    { param: 'model' },
  )
}
