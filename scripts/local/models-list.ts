import { readFile } from 'node:fs/promises'
import { safeParse } from 'zod/mini'
import { config } from '#shared/config'
import { parseJsonFile } from '#shared/json-file'
import {
  API_KEY_REF_PATTERN,
  type CatalogModel,
  CatalogModelSchema,
  hasUrlCredentials,
  StoredCatalogModelSchema,
} from '#shared/schemas/model'
import { LIMIT_NAMES } from '#shared/schemas/rate-limit'
import { commandError } from './cli.js'

// How `npm run models -- list` shows the catalog: the table's entries and, when the CLI has `LOOM_MODELS_FILE` set,
// the file's, each with what would make it invalid, credentials never shown.

export function issueText(issue: { path: PropertyKey[]; message: string }): string {
  return `${issue.path.map(String).join('.')}: ${issue.message}`
}

// A base URL with credentials in it (stored past the checks) is shown without them, and in a form `import` refuses.
function shownUrl(url: string): string {
  if (!hasUrlCredentials(url)) return url
  const u = new URL(url)
  return `${u.protocol}//(hidden)@${u.host}${u.pathname}${u.search}${u.hash}`
}

function upstreamSettings(m: CatalogModel): string {
  if (m.backend.kind !== 'openai-compatible') return ''
  const b = m.backend
  const upstreamModel = b.upstreamModel === undefined ? '' : `  upstreamModel=${b.upstreamModel}`
  const continuous = b.continuousUsage === false ? '  continuousUsage=false' : ''
  return `${upstreamModel}${continuous}`
}

/** Where a listed entry comes from: the table, or `LOOM_MODELS_FILE` (maybe overridden by a table entry). */
export type Origin = { from: 'table' } | { from: 'file'; overridden: boolean }

export function describe(m: CatalogModel, origin: Origin = { from: 'table' }, problem?: string): string {
  const where = m.backend.kind === 'openai-compatible' ? shownUrl(m.backend.baseUrl) : 'built-in engine'
  const cached = m.prices?.cached === undefined ? '' : ` cached=${m.prices.cached}`
  const prices = m.prices ? `  prices=${m.prices.prompt}/${m.prices.completion}${cached}` : ''
  const limits = LIMIT_NAMES.filter((n) => m[n] !== undefined).map((n) => `  ${n}=${m[n]}`)
  // Entries written by hand or by an older version are still read (and served); say what to fix.
  const checked = safeParse(CatalogModelSchema, m)
  const issue = checked.success ? problem : issueText(checked.error.issues[0] ?? { path: [], message: 'invalid' })
  const invalid = issue === undefined ? '' : `  INVALID (${issue})`
  const file =
    origin.from === 'table' ? '' : `  (LOOM_MODELS_FILE${origin.overridden ? ', overridden by the table entry' : ''})`
  const settings = upstreamSettings(m)
  return `${m.id}  ${m.backend.kind} ${where}${settings}  entities=${m.entities.join(',')}${prices}${limits.join('')}${file}${invalid}`
}

// What `list --json` prints for a stored reference that is not one (a key pasted in its place, written past the
// checks): never the value itself, and nothing `import` would take back.
const HIDDEN_REF = '(hidden: not an env: or secret: reference)'

export function shown(m: CatalogModel): CatalogModel {
  if (m.backend.kind !== 'openai-compatible') return m
  const backend = { ...m.backend, baseUrl: shownUrl(m.backend.baseUrl) }
  if (backend.apiKeyRef !== undefined && !API_KEY_REF_PATTERN.test(backend.apiKeyRef)) backend.apiKeyRef = HIDDEN_REF
  return { ...m, backend }
}

/** One entry of `LOOM_MODELS_FILE` as `list` shows it: read leniently, so that every entry shows with its problem. */
type FileEntry = { index: number; model: CatalogModel; problem?: string }

/**
 * The entries of the CLI's own `LOOM_MODELS_FILE`, or none when it is not set. A file that cannot be read or is not
 * JSON stops the command (one line, status 1); an entry too malformed to show at all is one line too.
 */
export async function fileEntries(): Promise<FileEntry[]> {
  const file = config.inference.modelsFile
  if (file === undefined) return []
  let raw: unknown
  try {
    raw = parseJsonFile(await readFile(file, 'utf8'), `LOOM_MODELS_FILE ${file}`)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    commandError(code === undefined ? (error as Error).message : `LOOM_MODELS_FILE ${file} cannot be read (${code})`)
  }
  const items = Array.isArray(raw) ? raw : [raw]
  const seen = new Set<string>()
  return items.map((item, index) => {
    const parsed = safeParse(StoredCatalogModelSchema, item)
    if (!parsed.success) {
      const issue = parsed.error.issues[0] ?? { path: [], message: 'invalid' }
      commandError(`LOOM_MODELS_FILE ${file}: invalid model at ${[index, ...issue.path].join('.')}: ${issue.message}`)
    }
    const model = parsed.data
    const duplicate = seen.has(model.id)
    seen.add(model.id)
    return duplicate ? { index, model, problem: 'id: appears more than once in the file' } : { index, model }
  })
}

/** The table's entries and the file's, sorted by id; a file entry is marked overridden where the table has its id. */
export function listRows(models: CatalogModel[], fromFile: FileEntry[]) {
  const inTable = new Set(models.map((m) => m.id))
  return [
    ...models.map((model) => ({
      model,
      origin: { from: 'table' } as Origin,
      problem: undefined as string | undefined,
    })),
    ...fromFile.map(({ model, problem }) => ({
      model,
      origin: { from: 'file', overridden: inTable.has(model.id) } as Origin,
      problem,
    })),
  ].sort((a, b) => a.model.id.localeCompare(b.model.id))
}
