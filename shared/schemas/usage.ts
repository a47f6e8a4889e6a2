import * as z from 'zod/mini'

/** One stored hourly usage counter (one shard of it) of an entity's project and model. */
export const UsageCounterSchema = z.object({
  entity: z.string(),
  project: z.string(),
  model: z.string(),
  /** The hour, `yyyy-mm-ddThh` (UTC). */
  hour: z.string(),
  shard: z.number(),
  requests: z.number(),
  abortedRequests: z.number(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  cachedTokens: z.number(),
  costUsd: z.number(),
})
export type UsageCounter = z.infer<typeof UsageCounterSchema>

/**
 * Query of `GET /v1/usage`: `project` as `<entity>/<project>` or a bare project name; times ISO 8601 or Unix seconds,
 * `start` rounded down to its hour, `end` exclusive (docs/inference.md §12).
 */
export const UsageQuerySchema = z.object({
  project: z.optional(z.string()),
  start: z.optional(z.string()),
  end: z.optional(z.string()),
})
export type UsageQuery = z.infer<typeof UsageQuerySchema>

/** One row of the usage report: an hour of one project and model. */
export const UsageRowSchema = z.object({
  hour: z.string(),
  project: z.string(),
  model: z.string(),
  requests: z.number(),
  aborted_requests: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  cached_tokens: z.number(),
  total_tokens: z.number(),
  cost_usd: z.number(),
})
export type UsageRow = z.infer<typeof UsageRowSchema>

/** `GET /v1/usage` answer: the rows of the window, their total, and the window's effective `start` and `end`. */
export const UsageReportResSchema = z.object({
  object: z.literal('usage'),
  entity: z.string(),
  project: z.nullable(z.string()),
  start: z.string(),
  end: z.string(),
  data: z.array(UsageRowSchema),
  total: z.object({
    requests: z.number(),
    aborted_requests: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    cached_tokens: z.number(),
    total_tokens: z.number(),
    cost_usd: z.number(),
  }),
})
export type UsageReportRes = z.infer<typeof UsageReportResSchema>
