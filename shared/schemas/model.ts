import * as z from 'zod/mini'
import { RateLimitsSchema } from '#shared/schemas/rate-limit'

/** Settings of a model served by an upstream OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, hosted). */
export const OpenAiCompatibleSettingsSchema = z.object({
  kind: z.literal('openai-compatible'),
  /** Base URL including `/v1`, e.g. `http://10.0.0.5:8000/v1`. */
  baseUrl: z.string(),
  /** Model name the upstream serves, when it differs from the catalog id. */
  upstreamModel: z.optional(z.string()),
  /**
   * Where the upstream credential comes from, never the credential itself: `env:NAME` (an environment variable) or
   * `secret:<arn-or-name>` (AWS Secrets Manager, resolved at run time).
   */
  apiKeyRef: z.optional(z.string()),
  connectTimeoutMs: z.optional(z.number()),
  firstByteTimeoutMs: z.optional(z.number()),
  /**
   * Whether the upstream understands vLLM's `continuous_usage_stats` (exact metering of streams cut short); default
   * true, set false for an upstream that rejects the field.
   */
  continuousUsage: z.optional(z.boolean()),
})
export type OpenAiCompatibleSettings = z.infer<typeof OpenAiCompatibleSettingsSchema>

/** Settings of a model served by the built-in reference engine; the engine owns the meaning of `settings`. */
export const ReferenceSettingsSchema = z.object({
  kind: z.literal('reference'),
  settings: z.optional(z.record(z.string(), z.unknown())),
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

/** Prices in USD per token, used by cost reports. */
export const ModelPricesSchema = z.object({
  prompt: z.number(),
  completion: z.number(),
  cached: z.optional(z.number()),
})
export type ModelPrices = z.infer<typeof ModelPricesSchema>

/** One model of the catalog: how it is listed, served, scheduled, priced and who may use it. */
export const CatalogModelSchema = z.object({
  id: z.string().check(z.minLength(1)),
  backend: BackendSettingsSchema,
  ownedBy: z.optional(z.string()),
  created: z.optional(z.number()),
  root: z.optional(z.string()),
  maxModelLen: z.optional(z.number()),
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
  /** Entities allowed to use the model; `*` means every entity. */
  entities: z.array(z.string()),
  /** Limits applying to each project (`<entity>/<project>`) using the model; absent means unlimited. */
  rpm: RateLimitsSchema.shape.rpm,
  tpm: RateLimitsSchema.shape.tpm,
  concurrency: RateLimitsSchema.shape.concurrency,
})
export type CatalogModel = z.infer<typeof CatalogModelSchema>
