import { readFile } from 'node:fs/promises'
import { safeParse } from 'zod/mini'
import { deleteModel, listModels, putModel } from '#shared/db/model-repository'
import { parseCatalogFile } from '#shared/inference/catalog'
import {
  API_KEY_REF_PATTERN,
  type BackendSettings,
  type CatalogModel,
  CatalogModelSchema,
  MODEL_BOUNDS,
  UpstreamUrlSchema,
} from '#shared/schemas/model'
import { LIMIT_MAX, LIMIT_NAMES } from '#shared/schemas/rate-limit'
import {
  type Cli,
  type CliOutput,
  type CliValues,
  commandError,
  intFlag,
  PROCESS_OUTPUT,
  runCli,
  usageError,
} from './cli.js'

const USAGE = `Usage: npm run models -- <command> [options]

  add <id> --entities <a,b|*> (--base-url <url> | --backend reference [--settings <json>]) [options]
      --base-url <url>              http(s) URL of an OpenAI-compatible server, including /v1
      --upstream-model <name>       model name on the upstream, when it differs from <id>
      --api-key-ref <ref>           env:NAME or secret:<secrets-manager-id>; credentials are never stored
      --owned-by <s> --root <s>
      --created <unix-seconds>      0 to ${MODEL_BOUNDS.created} (a negative value is refused)
      --max-model-len <n>           context window in tokens, 1 to ${MODEL_BOUNDS.maxModelLen}
      --no-chat-template            the tokenizer defines no chat template
      --multimodal | --text-only    whether image/audio/video parts are accepted (default: upstream yes, reference no)
      --scheduling fcfs|priority    priority allows a non-zero request priority
      --price-prompt <usd> --price-completion <usd> [--price-cached <usd>]   prices per token, 0 to ${MODEL_BOUNDS.price}
      --connect-timeout-ms <n> --first-byte-timeout-ms <n>   1 to ${MODEL_BOUNDS.timeoutMs}
      --no-continuous-usage         the upstream rejects vLLM's stream_options.continuous_usage_stats (default: it is
                                    asked for, so that a stream cut short is metered exactly); --continuous-usage
                                    states the default
      --rpm <n> --tpm <n> --concurrency <n>   limits per project using the model: requests/min (at most
                                    ${LIMIT_MAX.rpm}), tokens/min (at most ${LIMIT_MAX.tpm}), in flight (at most ${LIMIT_MAX.concurrency})
  import <file.json>                add (or replace) every model of a catalog file (one model or an array)
  list [--json]                     list the catalog (entries the checks above refuse are marked INVALID)
  remove <id>                       remove a model

The upstream options (--base-url to --no-continuous-usage) apply to upstream models only, --settings to reference
models only; a command refuses the options and arguments it does not take. Catalog files follow the same rules.

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
  'no-continuous-usage': { type: 'boolean' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const

type Values = CliValues<typeof OPTIONS>
type Flag = keyof typeof OPTIONS
type StringFlag = { [K in Flag]: (typeof OPTIONS)[K]['type'] extends 'string' ? K : never }[Flag]

// What a reference model would silently ignore.
const UPSTREAM_FLAGS = [
  'base-url',
  'upstream-model',
  'api-key-ref',
  'connect-timeout-ms',
  'first-byte-timeout-ms',
  'continuous-usage',
  'no-continuous-usage',
] as const

function int(values: Values, flag: StringFlag, min: 0 | 1, max: number): number | undefined {
  const raw = values[flag]
  return raw === undefined ? undefined : intFlag(flag, raw, min, max)
}

function price(values: Values, flag: 'price-prompt' | 'price-completion' | 'price-cached'): number | undefined {
  const raw = values[flag]
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (raw.trim() === '' || !(value >= 0 && value <= MODEL_BOUNDS.price)) {
    usageError(`--${flag} must be a number from 0 to ${MODEL_BOUNDS.price} (USD per token)`)
  }
  return value
}

function backendFromFlags(values: Values): BackendSettings {
  if (values.backend === 'reference') {
    const stray = UPSTREAM_FLAGS.find((flag) => values[flag] !== undefined)
    if (stray !== undefined) usageError(`--${stray} applies to openai-compatible models, not --backend reference`)
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
  if (values.settings !== undefined) usageError('--settings applies to --backend reference only')
  const baseUrl = values['base-url'] ?? usageError('--base-url is required for an openai-compatible model')
  if (!safeParse(UpstreamUrlSchema, baseUrl).success) {
    usageError('--base-url must be an http or https URL such as http://10.0.0.5:8000/v1')
  }
  const ref = values['api-key-ref']
  if (ref !== undefined && !API_KEY_REF_PATTERN.test(ref)) {
    usageError('--api-key-ref must be env:NAME or secret:<id>')
  }
  const backend: BackendSettings = { kind: 'openai-compatible', baseUrl }
  if (values['upstream-model'] !== undefined) backend.upstreamModel = values['upstream-model']
  if (ref !== undefined) backend.apiKeyRef = ref
  const connect = int(values, 'connect-timeout-ms', 1, MODEL_BOUNDS.timeoutMs)
  const firstByte = int(values, 'first-byte-timeout-ms', 1, MODEL_BOUNDS.timeoutMs)
  if (connect !== undefined) backend.connectTimeoutMs = connect
  if (firstByte !== undefined) backend.firstByteTimeoutMs = firstByte
  if (values['continuous-usage'] && values['no-continuous-usage']) {
    usageError('--continuous-usage and --no-continuous-usage exclude each other')
  }
  if (values['continuous-usage']) backend.continuousUsage = true
  if (values['no-continuous-usage']) backend.continuousUsage = false
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
  const created = int(values, 'created', 0, MODEL_BOUNDS.created)
  if (created !== undefined) model.created = created
  const maxModelLen = int(values, 'max-model-len', 1, MODEL_BOUNDS.maxModelLen)
  if (maxModelLen !== undefined) model.maxModelLen = maxModelLen
  if (values['no-chat-template']) model.hasChatTemplate = false
  if (values.multimodal && values['text-only']) usageError('--multimodal and --text-only exclude each other')
  if (values.multimodal) model.multimodal = true
  if (values['text-only']) model.multimodal = false
  if (values.scheduling !== undefined) model.scheduling = values.scheduling
  if ((values['price-prompt'] === undefined) !== (values['price-completion'] === undefined)) {
    usageError('--price-prompt and --price-completion go together')
  }
  if (values['price-cached'] !== undefined && values['price-prompt'] === undefined) {
    usageError('--price-cached needs --price-prompt and --price-completion')
  }
  const prompt = price(values, 'price-prompt')
  const completion = price(values, 'price-completion')
  const cached = price(values, 'price-cached')
  if (prompt !== undefined) {
    model.prices = cached === undefined ? { prompt, completion } : { prompt, completion, cached }
  }
  for (const name of LIMIT_NAMES) {
    const value = int(values, name, 1, LIMIT_MAX[name])
    if (value !== undefined) model[name] = value
  }
  const parsed = safeParse(CatalogModelSchema, model)
  if (!parsed.success) usageError(`Invalid model: ${parsed.error.issues.map(issueText).join('; ')}`)
  return parsed.data
}

function issueText(issue: { path: PropertyKey[]; message: string }): string {
  return `${issue.path.map(String).join('.')}: ${issue.message}`
}

function describe(m: CatalogModel): string {
  const where = m.backend.kind === 'openai-compatible' ? m.backend.baseUrl : 'built-in engine'
  const prices = m.prices ? `  prices=${m.prices.prompt}/${m.prices.completion}` : ''
  const limits = LIMIT_NAMES.filter((n) => m[n] !== undefined).map((n) => `  ${n}=${m[n]}`)
  // Entries written by hand or by an older version are still read (and served); say what to fix.
  const checked = safeParse(CatalogModelSchema, m)
  const issue = checked.success ? undefined : checked.error.issues[0]
  const invalid = issue === undefined ? '' : `  INVALID (${issueText(issue)})`
  return `${m.id}  ${m.backend.kind} ${where}  entities=${m.entities.join(',')}${prices}${limits.join('')}${invalid}`
}

// What `list --json` prints for a stored reference that is not one (a key pasted in its place, written past the
// checks): never the value itself, and nothing `import` would take back.
const HIDDEN_REF = '(hidden: not an env: or secret: reference)'

function shown(m: CatalogModel): CatalogModel {
  if (m.backend.kind !== 'openai-compatible' || m.backend.apiKeyRef === undefined) return m
  if (API_KEY_REF_PATTERN.test(m.backend.apiKeyRef)) return m
  return { ...m, backend: { ...m.backend, apiKeyRef: HIDDEN_REF } }
}

const ADD_FLAGS = (Object.keys(OPTIONS) as Flag[]).filter((flag) => flag !== 'json' && flag !== 'help')

/** `npm run models -- <argv>`: administers the model catalog; returns the exit status (scripts/models.ts). */
export function modelsCli(argv: string[], output: CliOutput = PROCESS_OUTPUT): Promise<number> {
  const cli = {
    name: 'npm run models',
    usage: USAGE,
    options: OPTIONS,
    commands: {
      add: {
        args: ['<id>'],
        flags: ADD_FLAGS,
        run: async (rest, values) => {
          const model = modelFromFlags(values, rest[0] ?? usageError('add needs a model id'))
          await putModel(model)
          output.out(`Added ${describe(model)}\n`)
        },
      },
      import: {
        args: ['<file.json>'],
        flags: [],
        run: async (rest) => {
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
      },
      list: {
        args: [],
        flags: ['json'],
        run: async (_rest, values) => {
          const models = await listModels()
          if (values.json) output.out(`${JSON.stringify(models.map(shown), null, 2)}\n`)
          else for (const m of models) output.out(`${describe(m)}\n`)
          if (models.length === 0 && !values.json) output.out('No models.\n')
        },
      },
      remove: {
        args: ['<id>'],
        flags: [],
        run: async (rest) => {
          const id = rest[0] ?? usageError('remove needs a model id')
          if (!(await deleteModel(id))) commandError(`No model with id ${id}; \`models list\` shows the ids`)
          output.out(`Removed ${id}\n`)
        },
      },
    },
  } satisfies Cli<typeof OPTIONS>
  return runCli(cli, argv, output)
}
