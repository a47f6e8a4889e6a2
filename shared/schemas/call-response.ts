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

/** `POST /trace/usage` and `POST /calls/usage` answer: usage per call id, then per model, then per counter. */
export const UsageResSchema = z.object({
  call_usage: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.nullable(z.number())))),
  unfinished_call_ids: z.array(z.string()),
})
export type UsageRes = z.infer<typeof UsageResSchema>

/** `POST /cost/create` answer: the ids of the prices created, per model. */
export const CostCreateResSchema = z.object({ ids: z.array(z.array(z.string())) })
export type CostCreateRes = z.infer<typeof CostCreateResSchema>
