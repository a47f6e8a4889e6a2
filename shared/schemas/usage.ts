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

/** Query of `GET /v1/usage`: `project` as `<entity>/<project>` or a bare project name; times ISO 8601 or Unix seconds. */
export const UsageQuerySchema = z.object({
  project: z.optional(z.string()),
  start: z.optional(z.string()),
  end: z.optional(z.string()),
})
export type UsageQuery = z.infer<typeof UsageQuerySchema>

/** One row of the usage report: an hour of one project and model. */
export type UsageRow = {
  hour: string
  project: string
  model: string
  requests: number
  aborted_requests: number
  prompt_tokens: number
  completion_tokens: number
  cached_tokens: number
  total_tokens: number
  cost_usd: number
}
