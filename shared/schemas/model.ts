import * as z from 'zod/mini'
import { NameSchema } from '#shared/schemas/api-key'
import { EngineSettingsSchema } from '#shared/schemas/engine-settings'
import { LIMIT_MAX, RateLimitsSchema } from '#shared/schemas/rate-limit'

/** The bounds of a catalog entry's numbers, checked wherever an entry comes in (CLI, import, `LOOM_MODELS_FILE`). */
export const MODEL_BOUNDS = {
  /** Unix seconds up to 9999-12-31: a time in milliseconds (13 digits) is refused rather than read as a far future. */
  created: 253_402_300_799,
  /** Tokens: today's largest context windows are around ten million. */
  maxModelLen: 100_000_000,
  /** Milliseconds: Node's timers fire at once past 2^31-1 ms, and an hour is longer than any Lambda runs. */
  timeoutMs: 3_600_000,
  /** USD per token: the dearest models cost well under a cent, so this catches a price typed per million tokens. */
  price: 1,
} as const

const intIn = (min: number, max: number) => z.int().check(z.minimum(min), z.maximum(max))
const TimeoutMs = intIn(1, MODEL_BOUNDS.timeoutMs)
const Price = z.number().check(z.minimum(0), z.maximum(MODEL_BOUNDS.price))

/** Whether a URL carries a user name or password (`http://user:pass@host/`); false for one that does not parse. */
export function hasUrlCredentials(url: string): boolean {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  return parsed !== undefined && (parsed.username !== '' || parsed.password !== '')
}

/**
 * The refusal of a base URL with credentials in it: the gateway never sends them, and the catalog stores credentials
 * only by reference. It never repeats the URL.
 */
export const URL_CREDENTIALS_ERROR =
  'must not contain a user name or password; credentials go by reference (--api-key-ref, or backend.apiKeyRef in a catalog file)'

/**
 * An upstream base URL: the upstream pools speak http and https only, so any other scheme would fail every request;
 * credentials in it (`user:pass@`) are refused (`URL_CREDENTIALS_ERROR`).
 */
export const UpstreamUrlSchema = z
  .url({
    protocol: /^https?$/,
    error: 'must be an http or https URL, such as http://10.0.0.5:8000/v1',
  })
  .check(z.refine((url) => !hasUrlCredentials(url), { error: URL_CREDENTIALS_ERROR, abort: true }))

/**
 * What a credential reference looks like: `env:NAME` (an environment variable's name) or `secret:<id>` (a Secrets
 * Manager name or ARN). Anything else, a pasted key above all, is refused on the way in and never served.
 */
export const API_KEY_REF_PATTERN = /^(env:[A-Za-z_][A-Za-z0-9_]*|secret:.+)$/

/** The refusal of a reference that fails `API_KEY_REF_PATTERN`; it never repeats the value, which may be a key. */
const API_KEY_REF_ERROR = 'must be env:NAME or secret:<id>; the catalog never stores a credential itself'

/** A credential reference (`API_KEY_REF_PATTERN`), checked wherever an entry comes in. */
export const ApiKeyRefSchema = z.string().check(z.regex(API_KEY_REF_PATTERN, { error: API_KEY_REF_ERROR }))

/** Settings of a model served by an upstream OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, hosted). */
export const OpenAiCompatibleSettingsSchema = z.object({
  kind: z.literal('openai-compatible'),
  /** Base URL including `/v1`, e.g. `http://10.0.0.5:8000/v1`. */
  baseUrl: UpstreamUrlSchema,
  /** Model name the upstream serves, when it differs from the catalog id. */
  upstreamModel: z.optional(z.string()),
  /**
   * Where the upstream credential comes from, never the credential itself: `env:NAME` (an environment variable) or
   * `secret:<arn-or-name>` (AWS Secrets Manager, resolved at run time).
   */
  apiKeyRef: z.optional(ApiKeyRefSchema),
  connectTimeoutMs: z.optional(TimeoutMs),
  firstByteTimeoutMs: z.optional(TimeoutMs),
  /**
   * Whether the upstream understands vLLM's `continuous_usage_stats` (exact metering of streams cut short); default
   * true, set false for an upstream that rejects the field.
   */
  continuousUsage: z.optional(z.boolean()),
})
export type OpenAiCompatibleSettings = z.infer<typeof OpenAiCompatibleSettingsSchema>

/**
 * Settings of a model served by the built-in reference engine; the engine owns the meaning of `settings`
 * (`EngineSettingsSchema`, checked here so that every way in refuses what the engine would refuse at request time).
 */
export const ReferenceSettingsSchema = z.object({
  kind: z.literal('reference'),
  settings: z.optional(EngineSettingsSchema),
})
export type ReferenceSettings = z.infer<typeof ReferenceSettingsSchema>

/** Which backend serves a model, with its settings. */
export const BackendSettingsSchema = z.discriminatedUnion('kind', [
  OpenAiCompatibleSettingsSchema,
  ReferenceSettingsSchema,
])
export type BackendSettings = z.infer<typeof BackendSettingsSchema>

/** The kinds of backend a catalog model may use. */
export type BackendKind = BackendSettings['kind']

/**
 * One name in a model's `entities`: `*` (every entity) or an entity name as API keys and memberships take it
 * (`NameSchema`), so that no entry names an entity no key can belong to.
 */
export const ModelEntitySchema = z.string().check(
  z.refine((entity) => entity === '*' || NameSchema.safeParse(entity).success, {
    error: "must be * or an entity name: letters, digits, '_', '.', '-' (max 128)",
  }),
)

/** Prices in USD per token, used by cost reports. */
export const ModelPricesSchema = z.object({
  prompt: Price,
  completion: Price,
  cached: z.optional(Price),
})
export type ModelPrices = z.infer<typeof ModelPricesSchema>

/**
 * One model of the catalog: how it is listed, served, scheduled, priced and who may use it. Every way in (the CLI,
 * its import, `LOOM_MODELS_FILE`, `putModel`) checks an entry against this schema.
 */
export const CatalogModelSchema = z.object({
  id: z.string().check(z.minLength(1)),
  backend: BackendSettingsSchema,
  ownedBy: z.optional(z.string()),
  created: z.optional(intIn(0, MODEL_BOUNDS.created)),
  root: z.optional(z.string()),
  maxModelLen: z.optional(intIn(1, MODEL_BOUNDS.maxModelLen)),
  /** Whether the model's tokenizer defines a chat template (docs/inference.md §3.9). */
  hasChatTemplate: z.optional(z.boolean()),
  /**
   * Whether the model takes image, audio and video content parts. Absent: upstream models do (the upstream decides),
   * reference models do not (docs/inference.md, "Multimodal content").
   */
  multimodal: z.optional(z.boolean()),
  /** `priority` scheduling allows a non-zero request `priority` (docs/inference.md §3.8). */
  scheduling: z.optional(z.enum(['fcfs', 'priority'])),
  prices: z.optional(ModelPricesSchema),
  /** Entities allowed to use the model, at least one; `*` means every entity. */
  entities: z
    .array(ModelEntitySchema)
    .check(z.minLength(1, { error: 'must name at least one entity, or * for every entity' })),
  /** Limits applying to each project (`<entity>/<project>`) using the model; absent means unlimited. */
  rpm: z.optional(intIn(1, LIMIT_MAX.rpm)),
  tpm: z.optional(intIn(1, LIMIT_MAX.tpm)),
  concurrency: z.optional(intIn(1, LIMIT_MAX.concurrency)),
})
export type CatalogModel = z.infer<typeof CatalogModelSchema>

/**
 * A catalog entry as the table may hold it: written by hand or before the checks above existed. Reads accept what
 * the checks refuse, so one bad entry cannot hide the whole catalog; the gateway answers for it instead (an unusable
 * upstream URL, credential reference or engine settings are a 503 naming the model) and `npm run models -- list`
 * marks it.
 */
export const StoredCatalogModelSchema = z.extend(CatalogModelSchema, {
  backend: z.discriminatedUnion('kind', [
    z.extend(OpenAiCompatibleSettingsSchema, {
      baseUrl: z.string(),
      apiKeyRef: z.optional(z.string()),
      connectTimeoutMs: z.optional(z.number()),
      firstByteTimeoutMs: z.optional(z.number()),
    }),
    // Checked when the engine reads it (`engineSettings`): a 503 naming the model and the field.
    z.extend(ReferenceSettingsSchema, { settings: z.optional(z.record(z.string(), z.unknown())) }),
  ]),
  entities: z.array(z.string()),
  created: z.optional(z.number()),
  maxModelLen: z.optional(z.number()),
  prices: z.optional(z.object({ prompt: z.number(), completion: z.number(), cached: z.optional(z.number()) })),
  rpm: RateLimitsSchema.shape.rpm,
  tpm: RateLimitsSchema.shape.tpm,
  concurrency: RateLimitsSchema.shape.concurrency,
})
