import * as z from 'zod/mini'

/** `POST /feedback/create` and `POST /feedback/replace` answer (`FeedbackCreateRes`). */
export const FeedbackCreateResSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  wb_user_id: z.string(),
  payload: z.record(z.string(), z.unknown()),
})
export type FeedbackCreateRes = z.infer<typeof FeedbackCreateResSchema>

/** `POST /feedback/batch/create` answer. */
export const FeedbackBatchCreateResSchema = z.object({ res: z.array(FeedbackCreateResSchema) })
export type FeedbackBatchCreateRes = z.infer<typeof FeedbackBatchCreateResSchema>

/** `POST /feedback/query` answer: rows with the requested fields. */
export const FeedbackQueryResSchema = z.object({
  result: z.array(z.record(z.string(), z.unknown())),
  total_count: z.number(),
})
export type FeedbackQueryRes = z.infer<typeof FeedbackQueryResSchema>

/** `POST /feedback/payload_schema` answer: leaf paths and value types. */
export const FeedbackPayloadSchemaResSchema = z.object({
  paths: z.array(z.object({ json_path: z.string(), value_type: z.string() })),
})
export type FeedbackPayloadSchemaRes = z.infer<typeof FeedbackPayloadSchemaResSchema>

/** `POST /feedback/stats` answer: the window, one bucket per step (`<agg>_<metric>` keys) and whole-window stats. */
export const FeedbackStatsResSchema = z.object({
  start: z.string(),
  end: z.string(),
  granularity: z.number(),
  timezone: z.string(),
  buckets: z.array(z.record(z.string(), z.nullable(z.union([z.string(), z.number()])))),
  window_stats: z.nullable(z.record(z.string(), z.record(z.string(), z.nullable(z.number())))),
})
export type FeedbackStatsRes = z.infer<typeof FeedbackStatsResSchema>
