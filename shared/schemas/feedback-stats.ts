import * as z from 'zod/mini'
import { DatetimeSchema } from '#shared/schemas/datetime'
import { LaxIntSchema, LaxNumberSchema } from '#shared/schemas/pydantic-lax'

/** Aggregations `feedback/stats` can compute. */
export const AggregationSchema = z.enum(['sum', 'avg', 'min', 'max', 'count', 'count_true', 'count_false'])
export type Aggregation = z.infer<typeof AggregationSchema>

/** `FeedbackMetricSpec`. */
export const FeedbackMetricSpecSchema = z.looseObject({
  json_path: z.string(),
  value_type: z._default(z.enum(['numeric', 'boolean', 'categorical']), 'numeric'),
  aggregations: z._default(z.array(AggregationSchema), []),
  percentiles: z._default(z.array(LaxNumberSchema), []),
})
export type FeedbackMetricSpec = z.infer<typeof FeedbackMetricSpecSchema>

const windowFields = {
  project_id: z.string(),
  start: DatetimeSchema,
  end: z.optional(z.nullable(DatetimeSchema)),
  feedback_type: z.optional(z.nullable(z.string())),
  trigger_ref: z.optional(z.nullable(z.string())),
}

/** `FeedbackStatsReq`. */
export const FeedbackStatsReqSchema = z.looseObject({
  ...windowFields,
  granularity: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  timezone: z._default(z.string(), 'UTC'),
  metrics: z._default(z.array(FeedbackMetricSpecSchema), []),
})
export type FeedbackStatsReq = z.infer<typeof FeedbackStatsReqSchema>

/** `FeedbackPayloadSchemaReq`. */
export const FeedbackPayloadSchemaReqSchema = z.looseObject({
  ...windowFields,
  sample_limit: z._default(z.pipe(LaxIntSchema, z.int().check(z.minimum(1), z.maximum(5000))), 2000),
})
export type FeedbackPayloadSchemaReq = z.infer<typeof FeedbackPayloadSchemaReqSchema>
