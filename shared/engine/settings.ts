import * as z from 'zod/mini'
import type { CatalogModel } from '#shared/schemas/model'

/** The engine's own part of a catalog entry (`backend.settings` of a `reference` model). */
export const EngineSettingsSchema = z.object({
  /**
   * Chat template (Jinja). Absent: ChatML. `null`: the model has no template, so requests without one get the
   * contract's "no chat template" error.
   */
  chatTemplate: z.optional(z.nullable(z.string())),
  /** Requests generating at once; more wait in the model's queue. */
  maxConcurrency: z.optional(z.int().check(z.minimum(1))),
  /** Largest `n` (choices, or beams with beam search) one request may ask for. */
  maxN: z.optional(z.int().check(z.minimum(1))),
  /** Largest `top_logprobs` / `prompt_logprobs` accepted (-1: the vocabulary size), vLLM's `max_logprobs`. */
  maxLogprobs: z.optional(z.int().check(z.minimum(-1))),
  /** Weight of the prompt's n-gram counts against the shipped corpus. */
  contextWeight: z.optional(z.number().check(z.minimum(0))),
  /** Prefix-cache capacity in 16-token blocks (0 disables caching). */
  prefixCacheBlocks: z.optional(z.int().check(z.minimum(0))),
  /** Whether usage reports `prompt_tokens_details` (vLLM's `--enable-prompt-tokens-details`). */
  promptTokensDetails: z.optional(z.boolean()),
  /** Sampling defaults used when the request leaves a field unset (the model's generation config). */
  generationConfig: z.optional(
    z.object({
      temperature: z.optional(z.number()),
      top_p: z.optional(z.number()),
      top_k: z.optional(z.number()),
      min_p: z.optional(z.number()),
      repetition_penalty: z.optional(z.number()),
      max_tokens: z.optional(z.number()),
    }),
  ),
})
/** A reference model's engine settings as stored in the catalog. */
export type EngineSettings = z.infer<typeof EngineSettingsSchema>

/** The reference model's context window when the catalog entry sets none. */
export const DEFAULT_MAX_MODEL_LEN = 8192

/**
 * The context window a catalog model enforces, which `GET /v1/models` reports: the reference engine's
 * (`maxModelLen`, else its default), or for an upstream model the catalog's `maxModelLen` (null when unset: only the
 * upstream knows it).
 */
export function maxModelLenOf(model: CatalogModel): number | null {
  if (model.backend.kind === 'reference') return model.maxModelLen ?? DEFAULT_MAX_MODEL_LEN
  return model.maxModelLen ?? null
}

/**
 * Largest `n` when the catalog entry sets none. vLLM itself sets no bound (a huge `n` exhausts its memory); Loom's
 * engine answers 400 instead, at OpenAI's documented cap.
 */
export const DEFAULT_MAX_N = 128

/** Resolved settings of one reference model. */
export type ResolvedEngineSettings = {
  id: string
  maxModelLen: number
  chatTemplate: string | null | undefined
  maxConcurrency: number
  maxN: number
  maxLogprobs: number
  contextWeight: number
  prefixCacheBlocks: number
  promptTokensDetails: boolean
  scheduling: 'fcfs' | 'priority'
  generationConfig: NonNullable<EngineSettings['generationConfig']>
}

/** Reads a catalog entry's engine settings, with defaults; invalid settings throw (a catalog error, not a 400). */
export function engineSettings(model: CatalogModel): ResolvedEngineSettings {
  const raw = model.backend.kind === 'reference' ? (model.backend.settings ?? {}) : {}
  const s = EngineSettingsSchema.parse(raw)
  return {
    id: model.id,
    maxModelLen: maxModelLenOf(model) ?? DEFAULT_MAX_MODEL_LEN,
    chatTemplate: model.hasChatTemplate === false ? null : s.chatTemplate,
    maxConcurrency: s.maxConcurrency ?? 8,
    maxN: s.maxN ?? DEFAULT_MAX_N,
    maxLogprobs: s.maxLogprobs ?? 20,
    contextWeight: s.contextWeight ?? 0.5,
    prefixCacheBlocks: s.prefixCacheBlocks ?? 4096,
    promptTokensDetails: s.promptTokensDetails ?? true,
    scheduling: model.scheduling ?? 'fcfs',
    generationConfig: s.generationConfig ?? {},
  }
}

/** The catalog entry of the default local model, registered at start (`loom/reference-1`). */
export function referenceCatalogModel(overrides: Partial<CatalogModel> = {}): CatalogModel {
  return {
    id: 'loom/reference-1',
    backend: { kind: 'reference', settings: {} },
    ownedBy: 'loom',
    created: 0,
    root: 'loom/reference-1',
    maxModelLen: DEFAULT_MAX_MODEL_LEN,
    hasChatTemplate: true,
    scheduling: 'fcfs',
    entities: ['*'],
    ...overrides,
  }
}
