import * as z from 'zod/mini'

/**
 * The reference engine's own part of a catalog entry (`backend.settings` of a `reference` model). The catalog schema
 * checks it wherever an entry comes in (`add`, `import`, `LOOM_MODELS_FILE`); the engine reads it with defaults.
 */
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
