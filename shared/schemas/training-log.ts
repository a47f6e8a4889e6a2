import * as z from 'zod/mini'
import { TrajectoryGroupSchema } from '#shared/schemas/trajectory'

/** The body of a log call; `model_id` in the body is accepted and ignored (the path wins). */
export const LogRequestSchema = z.looseObject({
  split: z.string(),
  trajectory_groups: z.array(TrajectoryGroupSchema),
  model_id: z.optional(z.nullable(z.string())),
})
export type LogRequest = z.infer<typeof LogRequestSchema>

/** The optional `Idempotency-Key` header of a log call: 1 to 255 visible ASCII characters. */
export const IdempotencyKeySchema = z.string().check(z.regex(/^[\x21-\x7e]{1,255}$/))

/** Metric values keyed `<split>/<key>`. */
export const MetricValuesSchema = z.record(z.string(), z.number())
export type MetricValues = z.infer<typeof MetricValuesSchema>

/** The answer to a log call: the computed metrics with the step and counts. */
export const LogResponseSchema = z.object({
  log_id: z.string(),
  model_id: z.string(),
  split: z.string(),
  step: z.int(),
  recorded_at: z.string(),
  metrics: MetricValuesSchema,
  group_count: z.int(),
  trajectory_count: z.int(),
  exception_count: z.int(),
})
export type LogResponse = z.infer<typeof LogResponseSchema>

/** Query of `GET /v1/preview/models/{model_id}/metrics`. */
export const MetricsQuerySchema = z.object({
  split: z.optional(z.string()),
  after_step: z.optional(z.string().check(z.regex(/^-?\d{1,15}$/))),
})

/** One metric over time: parallel arrays, ready to hand to a plotting library. */
export const MetricSeriesSchema = z.object({
  steps: z.array(z.int()),
  values: z.array(z.number()),
  recorded_at: z.array(z.string()),
})
export type MetricSeries = z.infer<typeof MetricSeriesSchema>

/** Answer of `GET /v1/preview/models/{model_id}/metrics`: one row per log call and one series per metric key. */
export const MetricsHistorySchema = z.object({
  model_id: z.string(),
  split: z.nullable(z.string()),
  after_step: z.nullable(z.int()),
  rows: z.array(
    z.object({
      log_id: z.string(),
      split: z.string(),
      step: z.int(),
      recorded_at: z.string(),
      metrics: MetricValuesSchema,
    }),
  ),
  series: z.record(z.string(), MetricSeriesSchema),
})
export type MetricsHistory = z.infer<typeof MetricsHistorySchema>

/** The stored record of one log call: its metrics (history row) and where its groups' chunks live. */
export const LogRecordSchema = z.object({
  modelId: z.string(),
  logId: z.string(),
  split: z.string(),
  step: z.int(),
  recordedAt: z.string(),
  metrics: MetricValuesSchema,
  groupCount: z.int(),
  trajectoryCount: z.int(),
  exceptionCount: z.int(),
  /** Chunk count of each group, in request order. */
  chunks: z.array(z.int()),
  /** How each group's JSON bytes are encoded before chunking. */
  codec: z.literal('gzip'),
})
export type LogRecord = z.infer<typeof LogRecordSchema>

/** An in-flight or finished idempotent log call, keyed by the caller's `Idempotency-Key`. */
export const IdempotencyRecordSchema = z.object({
  bodyHash: z.string(),
  logId: z.string(),
  step: z.int(),
  recordedAt: z.string(),
  response: z.optional(LogResponseSchema),
})
export type IdempotencyRecord = z.infer<typeof IdempotencyRecordSchema>
