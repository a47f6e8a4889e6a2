import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { safeParse } from 'zod/mini'
import { deleteModel, listModels, putModel } from '#shared/db/model-repository'
import { parseCatalogFile } from '#shared/inference/catalog'
import { type BackendSettings, type CatalogModel, CatalogModelSchema } from '#shared/schemas/model'
import { LIMIT_NAMES } from '#shared/schemas/rate-limit'
import { type CliOutput, PROCESS_OUTPUT, runCli, usageError } from './cli.js'

const USAGE = `Usage: npm run models -- <command> [options]

  add <id> --entities <a,b|*> (--base-url <url> | --backend reference [--settings <json>]) [options]
      --upstream-model <name>       model name on the upstream, when it differs from <id>
      --api-key-ref <ref>           env:NAME or secret:<secrets-manager-id>; credentials are never stored
      --owned-by <s> --created <unix-seconds> --root <s> --max-model-len <n>
      --no-chat-template            the tokenizer defines no chat template
      --multimodal | --text-only    whether image/audio/video parts are accepted (default: upstream yes, reference no)
      --scheduling fcfs|priority    priority allows a non-zero request priority
      --price-prompt <usd> --price-completion <usd> [--price-cached <usd>]   prices per token
      --connect-timeout-ms <n> --first-byte-timeout-ms <n> --continuous-usage
      --rpm <n> --tpm <n> --concurrency <n>   limits per project using the model (requests/min, tokens/min, in flight)
  import <file.json>                add (or replace) every model of a catalog file (one model or an array)
  list [--json]                     list the catalog
  remove <id>                       remove a model

Targets DYNAMODB_ENDPOINT / LOOM_TABLE_NAME when set (AWS when only LOOM_TABLE_NAME is set), else the local stack's
embedded DynamoDB under LOOM_DATA_DIR (default .loom-data), running or not. Adding an existing id replaces it.`

const OPTIONS = {
  'base-url': { type: 'string' },
  backend: { type: 'string' },
  settings: { type: 'string' },
  'upstream-model': { type: 'string' },
  'api-key-ref': { type: 'string' },
  'api-key': { type: 'string' },
  entities: { type: 'string' },
  'owned-by': { type: 'string' },
  created: { type: 'string' },
  root: { type: 'string' },
  'max-model-len': { type: 'string' },
  'no-chat-template': { type: 'boolean' },
  multimodal: { type: 'boolean' },
  'text-only': { type: 'boolean' },
  scheduling: { type: 'string' },
  'price-prompt': { type: 'string' },
  'price-completion': { type: 'string' },
  'price-cached': { type: 'string' },
  'connect-timeout-ms': { type: 'string' },
  'first-byte-timeout-ms': { type: 'string' },
  'continuous-usage': { type: 'boolean' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values']

function num(values: Values, flag: keyof Values): number | undefined {
  const raw = values[flag]
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(value) || value < 0) {
    usageError(`--${flag} must be a non-negative number`)
  }
  return value
}

function backendFromFlags(values: Values): BackendSettings {
  if (values.backend === 'reference') {
    let settings: Record<string, unknown> | undefined
    if (values.settings !== undefined) {
      try {
        settings = JSON.parse(values.settings) as Record<string, unknown>
      } catch {
        usageError('--settings must be a JSON object')
      }
    }
    return settings === undefined ? { kind: 'reference' } : { kind: 'reference', settings }
  }
  if (values.backend !== undefined && values.backend !== 'openai-compatible') {
    usageError("--backend must be 'openai-compatible' or 'reference'")
  }
  const baseUrl = values['base-url'] ?? usageError('--base-url is required for an openai-compatible model')
  if (!URL.canParse(baseUrl)) usageError('--base-url must be a URL such as http://10.0.0.5:8000/v1')
  const ref = values['api-key-ref']
  if (ref !== undefined && !/^(env:[A-Za-z_][A-Za-z0-9_]*|secret:.+)$/.test(ref)) {
    usageError('--api-key-ref must be env:NAME or secret:<id>')
  }
  const backend: BackendSettings = { kind: 'openai-compatible', baseUrl }
  if (values['upstream-model'] !== undefined) backend.upstreamModel = values['upstream-model']
  if (ref !== undefined) backend.apiKeyRef = ref
  const connect = num(values, 'connect-timeout-ms')
  const firstByte = num(values, 'first-byte-timeout-ms')
  if (connect !== undefined) backend.connectTimeoutMs = connect
  if (firstByte !== undefined) backend.firstByteTimeoutMs = firstByte
  if (values['continuous-usage']) backend.continuousUsage = true
  return backend
}

function modelFromFlags(values: Values, id: string): CatalogModel {
  if (values['api-key'] !== undefined) {
    usageError(
      'Credentials are never stored in the catalog: put the key in the environment or Secrets Manager and pass --api-key-ref',
    )
  }
  const entities = (values.entities ?? usageError('--entities is required (a comma-separated list, or * for everyone)'))
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
  const model: Record<string, unknown> = { id, backend: backendFromFlags(values), entities }
  if (values['owned-by'] !== undefined) model.ownedBy = values['owned-by']
  if (values.root !== undefined) model.root = values.root
  if (values.created !== undefined) model.created = num(values, 'created')
  if (values['max-model-len'] !== undefined) model.maxModelLen = num(values, 'max-model-len')
  if (values['no-chat-template']) model.hasChatTemplate = false
  if (values.multimodal && values['text-only']) usageError('--multimodal and --text-only exclude each other')
  if (values.multimodal) model.multimodal = true
  if (values['text-only']) model.multimodal = false
  if (values.scheduling !== undefined) model.scheduling = values.scheduling
  const prompt = num(values, 'price-prompt')
  const completion = num(values, 'price-completion')
  if ((prompt === undefined) !== (completion === undefined))
    usageError('--price-prompt and --price-completion go together')
  if (prompt !== undefined) {
    const cached = num(values, 'price-cached')
    model.prices = cached === undefined ? { prompt, completion } : { prompt, completion, cached }
  }
  for (const name of LIMIT_NAMES) {
    const raw = values[name]
    if (raw === undefined) continue
    const value = Number(raw)
    if (raw.trim() === '' || !Number.isInteger(value) || value < 1) usageError(`--${name} must be a positive integer`)
    model[name] = value
  }
  const parsed = safeParse(CatalogModelSchema, model)
  if (!parsed.success)
    usageError(`Invalid model: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`)
  return parsed.data
}

function describe(m: CatalogModel): string {
  const where = m.backend.kind === 'openai-compatible' ? m.backend.baseUrl : 'built-in engine'
  const prices = m.prices ? `  prices=${m.prices.prompt}/${m.prices.completion}` : ''
  const limits = LIMIT_NAMES.filter((n) => m[n] !== undefined).map((n) => `  ${n}=${m[n]}`)
  return `${m.id}  ${m.backend.kind} ${where}  entities=${m.entities.join(',')}${prices}${limits.join('')}`
}

/** `npm run models -- <argv>`: administers the model catalog; returns the exit status (scripts/models.ts). */
export async function modelsCli(argv: string[], output: CliOutput = PROCESS_OUTPUT): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS })
  return runCli(
    {
      usage: USAGE,
      commands: {
        add: async (rest) => {
          const model = modelFromFlags(values, rest[0] ?? usageError('add needs a model id'))
          await putModel(model)
          output.out(`Added ${describe(model)}\n`)
        },
        import: async (rest) => {
          const file = rest[0] ?? usageError('import needs a file')
          let models: CatalogModel[]
          try {
            models = parseCatalogFile(await readFile(file, 'utf8'), file)
          } catch (error) {
            usageError((error as Error).message)
          }
          for (const model of models) await putModel(model)
          output.out(`Imported ${models.length} model(s) from ${file}\n`)
        },
        list: async () => {
          const models = await listModels()
          if (values.json) output.out(`${JSON.stringify(models, null, 2)}\n`)
          else for (const m of models) output.out(`${describe(m)}\n`)
          if (models.length === 0 && !values.json) output.out('No models.\n')
        },
        remove: async (rest) => {
          const id = rest[0] ?? usageError('remove needs a model id')
          if (!(await deleteModel(id))) usageError(`No model with id ${id}`)
          output.out(`Removed ${id}\n`)
        },
      },
    },
    positionals,
    values.help,
    output,
  )
}
