import * as z from 'zod/mini'
import { EmptyResSchema } from '#shared/schemas/empty'

/** `POST /call/start` answer (and a start's entry in `call/upsert_batch`). */
export const CallStartResSchema = z.object({ id: z.string(), trace_id: z.string() })
export type CallStartRes = z.infer<typeof CallStartResSchema>

/** `POST /call/upsert_batch` answer: one entry per item, `{id, trace_id}` for a start, `{}` for an end. */
export const CallUpsertBatchResSchema = z.object({ res: z.array(z.union([CallStartResSchema, EmptyResSchema])) })
export type CallUpsertBatchRes = z.infer<typeof CallUpsertBatchResSchema>

/** `POST /calls/delete` answer. */
export const CallsDeleteResSchema = z.object({ num_deleted: z.number() })
export type CallsDeleteRes = z.infer<typeof CallsDeleteResSchema>

/** `POST /calls/query_stats` answer (`CallsQueryStatsRes`). */
export const CallsQueryStatsResSchema = z.object({
  count: z.number(),
  has_more: z.boolean(),
  total_storage_size_bytes: z.nullable(z.number()),
})
export type CallsQueryStatsRes = z.infer<typeof CallsQueryStatsResSchema>

/** `LLMAggregatedUsage`: every field always present (docs/tracing.md §14.1); costs null without a price. */
export const AggregatedUsageSchema = z.object({
  requests: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  cache_read_input_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  prompt_tokens_total_cost: z.nullable(z.number()),
  completion_tokens_total_cost: z.nullable(z.number()),
  cache_read_input_tokens_total_cost: z.nullable(z.number()),
  cache_creation_input_tokens_total_cost: z.nullable(z.number()),
})
export type AggregatedUsage = z.infer<typeof AggregatedUsageSchema>

/** `POST /trace/usage` and `POST /calls/usage` answer (`TraceUsageRes` / `CallsUsageRes`): usage per call, per model. */
export const UsageResSchema = z.object({
  call_usage: z.record(z.string(), z.record(z.string(), AggregatedUsageSchema)),
  unfinished_call_ids: z.array(z.string()),
})
export type UsageRes = z.infer<typeof UsageResSchema>

/** `POST /cost/create` answer: the ids of the prices created, per model. */
export const CostCreateResSchema = z.object({ ids: z.array(z.array(z.string())) })
export type CostCreateRes = z.infer<typeof CostCreateResSchema>

/** `POST /call/read` answer: the call with its derived summary, or null when there is none (or it was deleted). */
export const CallReadResSchema = z.object({ call: z.nullable(z.record(z.string(), z.unknown())) })
export type CallReadRes = z.infer<typeof CallReadResSchema>

/** `POST /cost/query` answer: the matching price rows, with the requested fields. */
export const CostQueryResSchema = z.object({ results: z.array(z.record(z.string(), z.unknown())) })
export type CostQueryRes = z.infer<typeof CostQueryResSchema>
