import { readFile } from 'node:fs/promises'
import { safeParse } from 'zod/mini'
import { config } from '#shared/config'
import { deleteModel, listModels, putModel } from '#shared/db/model-repository'
import { DuplicateModelIdError, parseCatalogFile } from '#shared/inference/catalog'
import { EngineSettingsSchema } from '#shared/schemas/engine-settings'
import {
  API_KEY_REF_PATTERN,
  type BackendSettings,
  type CatalogModel,
  CatalogModelSchema,
  hasUrlCredentials,
  MODEL_BOUNDS,
  ModelEntitySchema,
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
import { describe, fileEntries, issueText, listRows, shown } from './models-list.js'

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
  import <file.json>                add (or replace) every model of a catalog file (one model or an array; each id
                                    once)
  list [--json]                     list the catalog (entries the checks above refuse are marked INVALID), with
                                    LOOM_MODELS_FILE's entries when it is set, marked as coming from the file
  remove <id>                       remove a model from the table; an id only LOOM_MODELS_FILE names is refused
                                    (status 1, the file unchanged: remove it from the file yourself); removing a
                                    table entry that overrides a file entry lets the file's entry apply

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
    if (values.settings === undefined) return { kind: 'reference' }
    let raw: unknown
    try {
      raw = JSON.parse(values.settings)
    } catch {
      usageError('--settings must be a JSON object')
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) usageError('--settings must be a JSON object')
    const settings = safeParse(EngineSettingsSchema, raw)
    if (!settings.success) {
      const issue = settings.error.issues[0]
      usageError(
        `--settings is invalid: ${issueText({ path: ['settings', ...(issue?.path ?? [])], message: issue?.message ?? 'invalid' })}`,
      )
    }
    return { kind: 'reference', settings: settings.data }
  }
  if (values.backend !== undefined && values.backend !== 'openai-compatible') {
    usageError("--backend must be 'openai-compatible' or 'reference'")
  }
  if (values.settings !== undefined) usageError('--settings applies to --backend reference only')
  const baseUrl = values['base-url'] ?? usageError('--base-url is required for an openai-compatible model')
  if (hasUrlCredentials(baseUrl)) {
    // Never echoed: the URL holds a credential.
    usageError(
      '--base-url must not contain a user name or password; pass the credential by reference with --api-key-ref',
    )
  }
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
  if (entities.length === 0) usageError('--entities must name at least one entity, or * for every entity')
  const badEntity = entities.find((e) => !safeParse(ModelEntitySchema, e).success)
  if (badEntity !== undefined) {
    usageError(`--entities: '${badEntity}' is not an entity name (letters, digits, '_', '.', '-', max 128) nor *`)
  }
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
            // The file is well formed but self-contradictory: not a command-line mistake.
            if (error instanceof DuplicateModelIdError) commandError(error.message)
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
          const rows = listRows(await listModels(), await fileEntries())
          if (values.json) {
            const json = rows.map(({ model, origin }) =>
              origin.from === 'table'
                ? shown(model)
                : { ...shown(model), source: 'LOOM_MODELS_FILE', ...(origin.overridden ? { overridden: true } : {}) },
            )
            output.out(`${JSON.stringify(json, null, 2)}\n`)
          } else for (const { model, origin, problem } of rows) output.out(`${describe(model, origin, problem)}\n`)
          if (rows.length === 0 && !values.json) output.out('No models.\n')
        },
      },
      remove: {
        args: ['<id>'],
        flags: [],
        run: async (rest) => {
          const id = rest[0] ?? usageError('remove needs a model id')
          // A file the gateway cannot read does not stop the removal of a table entry.
          const inFile = await fileEntries().then(
            (entries) => entries.some((e) => e.model.id === id),
            () => false,
          )
          if (!(await deleteModel(id))) {
            if (inFile) {
              commandError(`Model ${id} comes from LOOM_MODELS_FILE (${config.inference.modelsFile}); remove it there`)
            }
            commandError(`No model with id ${id}; \`models list\` shows the ids`)
          }
          // The table entry overrode the file's, which serves again.
          const note = inFile ? ` (LOOM_MODELS_FILE's entry ${id} now applies)` : ''
          output.out(`Removed ${id}${note}\n`)
        },
      },
    },
  } satisfies Cli<typeof OPTIONS>
  return runCli(cli, argv, output)
}
