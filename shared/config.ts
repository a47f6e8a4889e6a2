/**
 * The only reader of `process.env`: every setting Loom uses, read once at module load, trimmed and validated.
 * The composition roots (the local server, tests) may adjust fields before first use, e.g. to point at an
 * embedded DynamoDB whose port is only known after it started.
 */

const env = process.env

function read(name: string): string | undefined {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

function readInt(name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = read(name)
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`
    throw new Error(`${name} environment variable must be an integer ${range}, got "${raw}"`)
  }
  return value
}

function readBool(name: string): boolean {
  const raw = read(name)?.toLowerCase()
  return raw === '1' || raw === 'true' || raw === 'yes'
}

/** Reads a variable that must be set, failing fast with a clear message. */
export function required(name: string): string {
  const value = read(name)
  if (value === undefined) throw new Error(`${name} environment variable is not set`)
  return value
}

/** Runtime settings shared by every function and the local server. */
export type Config = {
  /** DynamoDB table holding all of Loom's data (set by CDK in Lambda, by `npm start` locally). */
  tableName: string | undefined
  /** Explicit DynamoDB endpoint (dynalite, DynamoDB Local); undefined means the AWS regional endpoint. */
  dynamoEndpoint: string | undefined
  region: string
  /** How the DynamoDB client retries and times out. */
  dynamo: DynamoConfig
  /** How long a key look-up (including the key's memberships) is cached in memory, in ms. */
  authCacheTtlMs: number
  /** Upper bound on cached key look-ups per process. */
  authCacheMaxEntries: number
  /**
   * Largest accepted request body in bytes (`LOOM_MAX_BODY_BYTES`): by default 5 MiB in Lambda (its synchronous
   * payload limit is 6 MB) and 32 MiB elsewhere, Weave's own limit: the JS SDK sends call batches of up to 10 MiB,
   * the Python SDK up to 31 MiB (docs/tracing.md, §1 Limits).
   */
  maxBodyBytes: number
  /** True inside AWS Lambda. */
  inLambda: boolean
  /**
   * How long a concurrency slot is held at most, in ms: a slot whose holder crashed is free again after this. At least
   * the longest request (Lambda's 15-minute limit, also the stream limit).
   */
  concurrencyLeaseMs: number
  /** Inference gateway settings. */
  inference: InferenceConfig
  /** CloudWatch metrics (Embedded Metric Format) settings. */
  metrics: MetricsConfig
  /** Trace server settings. */
  tracing: TracingConfig
}

/** Settings of the trace server (calls, costs). */
export type TracingConfig = {
  /** JSON price table replacing the bundled default prices, same format (`LOOM_PRICES_FILE`). */
  pricesFile: string | undefined
  /** Extra keys redacted from call inputs and attributes at ingest, comma-separated (`LOOM_REDACT_KEYS`). */
  redactKeys: string[]
}

/** Per-request CloudWatch metrics, written as EMF records on stdout. */
export type MetricsConfig = {
  /** Whether requests emit EMF records (`LOOM_METRICS`; on by default only inside Lambda). */
  enabled: boolean
  /** CloudWatch namespace (`LOOM_METRICS_NAMESPACE`). */
  namespace: string
  /** The `service` dimension: the manifest id CDK sets as `LOOM_FUNCTION_ID`, `loom` elsewhere. */
  service: string
}

/** DynamoDB client settings: bounded attempts with full-jitter exponential backoff, and socket timeouts. */
export type DynamoConfig = {
  /** Attempts per DynamoDB call, the first included (`LOOM_DYNAMO_MAX_ATTEMPTS`). */
  maxAttempts: number
  /** Base of the backoff in ms: retry n waits a random time in [0, base * 2^n) (`LOOM_DYNAMO_RETRY_BASE_MS`). */
  retryBaseMs: number
  /** Upper bound of one backoff wait, in ms (`LOOM_DYNAMO_RETRY_MAX_DELAY_MS`). */
  retryMaxDelayMs: number
  /** TCP connect timeout, in ms (`LOOM_DYNAMO_CONNECT_TIMEOUT_MS`). */
  connectTimeoutMs: number
  /** Socket idle timeout of one request, in ms (`LOOM_DYNAMO_REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs: number
  /** The `Retry-After` (seconds) answered with a 503 once DynamoDB retries are exhausted (`LOOM_DYNAMO_RETRY_AFTER_S`). */
  retryAfterSeconds: number
}

/** Settings of the inference gateway (chat completions, models, usage). */
export type InferenceConfig = {
  /** JSON file of catalog models loaded at start, in addition to the table's (`LOOM_MODELS_FILE`). */
  modelsFile: string | undefined
  /** How long catalog look-ups are cached in memory, in ms. */
  catalogCacheTtlMs: number
  /** Accept `chat_template` in requests (vLLM's `--trust-request-chat-template`). */
  trustRequestChatTemplate: boolean
  /** Accept `mm_processor_kwargs` in requests (vLLM's `--trust-request-mm-kwargs`). */
  trustRequestMmKwargs: boolean
  /** Interval of SSE comment heartbeats while no token has arrived yet, in ms. */
  heartbeatMs: number
  /** Default upstream connect timeout, in ms. */
  connectTimeoutMs: number
  /** Default upstream first-byte timeout (response headers), in ms. */
  firstByteTimeoutMs: number
  /** Upstream attempts after the first, made only before any byte reached the client. */
  upstreamRetries: number
  /** How long usage counters are batched in memory before one flush, in ms (0 flushes after every completion). */
  usageFlushMs: number
  /** Whether gateway completions are recorded as calls in the caller's project. */
  tracing: boolean
  /**
   * Seed of the reference engine's process-wide generator (`LOOM_ENGINE_SEED`, vLLM's `--seed`): requests without a
   * `seed` draw theirs from it, so a process serving the same requests in the same order samples the same text.
   * Unset: every unseeded request is seeded at random.
   */
  engineSeed: number | undefined
}

/** The DynamoDB engines the local stack can launch itself. */
export type LocalDynamoEngine = 'dynalite' | 'local'

function readEngine(name: string): LocalDynamoEngine {
  const raw = read(name)?.toLowerCase() ?? 'dynalite'
  if (raw !== 'dynalite' && raw !== 'local') {
    throw new Error(`${name} environment variable must be 'dynalite' or 'local', got "${read(name)}"`)
  }
  return raw
}

/** Settings only the local stack (`npm start`, `npm run keys`) uses. */
export type LocalConfig = {
  port: number
  host: string
  dataDir: string
  memory: boolean
  /**
   * The DynamoDB engine `npm start` launches when `DYNAMODB_ENDPOINT` is unset (`LOOM_DYNAMODB`): `dynalite`
   * (default, embedded in the process) or `local` (AWS's DynamoDB Local, a Java 17+ process).
   */
  dynamoEngine: LocalDynamoEngine
  bootstrapKey: string | undefined
  bootstrapUser: string
  bootstrapEntity: string
}

const inLambda = read('AWS_LAMBDA_FUNCTION_NAME') !== undefined

/** The default `maxBodyBytes` in Lambda, and on the local server and any other host. */
export const MAX_BODY_BYTES = { lambda: 5 * 1024 * 1024, server: 32 * 1024 * 1024 } as const

/** The process-wide configuration, read from the environment once. */
export const config: Config = {
  tableName: read('LOOM_TABLE_NAME'),
  dynamoEndpoint: read('DYNAMODB_ENDPOINT'),
  region: read('AWS_REGION') ?? read('AWS_DEFAULT_REGION') ?? 'us-east-1',
  // Lambda defaults: a few quick retries fit well inside API Gateway's 29 s; a stuck socket fails fast and is retried.
  dynamo: {
    maxAttempts: readInt('LOOM_DYNAMO_MAX_ATTEMPTS', 4, 1),
    retryBaseMs: readInt('LOOM_DYNAMO_RETRY_BASE_MS', 50),
    retryMaxDelayMs: readInt('LOOM_DYNAMO_RETRY_MAX_DELAY_MS', 2_000),
    connectTimeoutMs: readInt('LOOM_DYNAMO_CONNECT_TIMEOUT_MS', 1_000, 1),
    requestTimeoutMs: readInt('LOOM_DYNAMO_REQUEST_TIMEOUT_MS', 5_000, 1),
    retryAfterSeconds: readInt('LOOM_DYNAMO_RETRY_AFTER_S', 1, 1),
  },
  authCacheTtlMs: readInt('LOOM_AUTH_CACHE_TTL_MS', 5_000),
  authCacheMaxEntries: readInt('LOOM_AUTH_CACHE_MAX_ENTRIES', 10_000, 1),
  maxBodyBytes: readInt('LOOM_MAX_BODY_BYTES', inLambda ? MAX_BODY_BYTES.lambda : MAX_BODY_BYTES.server, 1),
  inLambda,
  concurrencyLeaseMs: readInt('LOOM_CONCURRENCY_LEASE_MS', 15 * 60_000, 1),
  inference: {
    modelsFile: read('LOOM_MODELS_FILE'),
    catalogCacheTtlMs: readInt('LOOM_CATALOG_CACHE_TTL_MS', 10_000),
    trustRequestChatTemplate: readBool('LOOM_TRUST_REQUEST_CHAT_TEMPLATE'),
    trustRequestMmKwargs: readBool('LOOM_TRUST_REQUEST_MM_KWARGS'),
    heartbeatMs: readInt('LOOM_SSE_HEARTBEAT_MS', 2_000, 1),
    connectTimeoutMs: readInt('LOOM_UPSTREAM_CONNECT_TIMEOUT_MS', 5_000, 1),
    firstByteTimeoutMs: readInt('LOOM_UPSTREAM_FIRST_BYTE_TIMEOUT_MS', 120_000, 1),
    upstreamRetries: readInt('LOOM_UPSTREAM_RETRIES', 2),
    // Lambda may freeze or drop an idle environment, so there usage is flushed after each completion.
    usageFlushMs: readInt('LOOM_USAGE_FLUSH_MS', read('AWS_LAMBDA_FUNCTION_NAME') === undefined ? 1_000 : 0),
    tracing: read('LOOM_INFERENCE_TRACING') !== 'off',
    engineSeed: read('LOOM_ENGINE_SEED') === undefined ? undefined : readInt('LOOM_ENGINE_SEED', 0),
  },
  metrics: {
    // EMF records are stdout lines that only CloudWatch Logs turns into metrics: elsewhere they would be noise.
    enabled:
      read('LOOM_METRICS') === undefined ? read('AWS_LAMBDA_FUNCTION_NAME') !== undefined : readBool('LOOM_METRICS'),
    namespace: read('LOOM_METRICS_NAMESPACE') ?? 'Loom',
    service: read('LOOM_FUNCTION_ID') ?? 'loom',
  },
  tracing: {
    pricesFile: read('LOOM_PRICES_FILE'),
    redactKeys: (read('LOOM_REDACT_KEYS') ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== ''),
  },
}

/** Where the AWS Parameters and Secrets Lambda extension listens, and the token it expects (the session token). */
export function secretsExtension(): { port: number; token: string | undefined } {
  return {
    port: readInt('PARAMETERS_SECRETS_EXTENSION_HTTP_PORT', 2773, 1, 65_535),
    token: read('LOOM_SECRETS_TOKEN') ?? read('AWS_SESSION_TOKEN'),
  }
}

/** The execution role's credentials that Lambda puts in the environment; undefined outside Lambda (or when unset). */
export function lambdaCredentials():
  | { accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined }
  | undefined {
  const accessKeyId = read('AWS_ACCESS_KEY_ID')
  const secretAccessKey = read('AWS_SECRET_ACCESS_KEY')
  if (accessKeyId === undefined || secretAccessKey === undefined) return undefined
  return { accessKeyId, secretAccessKey, sessionToken: read('AWS_SESSION_TOKEN') }
}

/** An upstream credential named by a catalog entry's `env:NAME` reference; undefined when unset. */
export function credentialFromEnv(name: string): string | undefined {
  return read(name)
}

/** The local stack's settings, read from the environment once. */
export const localConfig: LocalConfig = {
  port: readInt('PORT', 8700, 0, 65_535),
  host: read('HOST') ?? '127.0.0.1',
  dataDir: read('LOOM_DATA_DIR') ?? '.loom-data',
  memory: readBool('LOOM_MEMORY'),
  dynamoEngine: readEngine('LOOM_DYNAMODB'),
  bootstrapKey: read('LOOM_BOOTSTRAP_KEY'),
  bootstrapUser: read('LOOM_BOOTSTRAP_USER') ?? 'local-user',
  bootstrapEntity: read('LOOM_BOOTSTRAP_ENTITY') ?? 'local',
}

/** The table name, failing fast when it was never configured. */
export function tableName(): string {
  if (config.tableName === undefined) throw new Error('LOOM_TABLE_NAME environment variable is not set')
  return config.tableName
}
