import * as z from 'zod/mini'
import { DatetimeSchema } from '#shared/schemas/datetime'
import { LaxBoolSchema, LaxIntSchema } from '#shared/schemas/pydantic-lax'
import { QuerySchema } from '#shared/schemas/query'

const optString = z.optional(z.nullable(z.string()))
const optInt = z.optional(z.nullable(LaxIntSchema))
const JsonObjectSchema = z.record(z.string(), z.unknown())
// A run step: Weave stores it as a UInt64, so it is a whole number from 0; Loom keeps it exactly up to 2^53 - 1 (a
// larger one made the SDK's marshalling throw, a 500 that the JS client retries for hours).
const optRunStep = z.optional(
  z.nullable(
    z.pipe(
      LaxIntSchema,
      z.number().check(
        z.refine((n) => Number.isSafeInteger(n) && n >= 0, {
          message: `Input should be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
        }),
      ),
    ),
  ),
)

/** The start part of a call (`StartedCallSchemaForInsert`); `wb_user_id` is accepted but replaced by the caller. */
export const StartedCallSchema = z.object({
  project_id: z.string(),
  id: optString,
  op_name: z.string(),
  display_name: optString,
  trace_id: optString,
  parent_id: optString,
  thread_id: optString,
  turn_id: optString,
  started_at: DatetimeSchema,
  attributes: JsonObjectSchema,
  inputs: JsonObjectSchema,
  otel_dump: z.optional(z.nullable(JsonObjectSchema)),
  wb_user_id: optString,
  wb_run_id: optString,
  wb_run_step: optRunStep,
})
export type StartedCall = z.infer<typeof StartedCallSchema>

/** The end part of a call (`EndedCallSchemaForInsert`). */
export const EndedCallSchema = z.object({
  project_id: z.string(),
  id: z.string(),
  ended_at: DatetimeSchema,
  exception: optString,
  output: z.optional(z.unknown()),
  summary: JsonObjectSchema,
  trace_id: optString,
  is_eval: z.optional(z.nullable(LaxBoolSchema)),
  started_at: z.optional(z.nullable(DatetimeSchema)),
  wb_run_step_end: optRunStep,
})
export type EndedCall = z.infer<typeof EndedCallSchema>

/** `POST /call/start` body. */
export const CallStartReqSchema = z.object({ start: StartedCallSchema })
/** `POST /call/end` body. */
export const CallEndReqSchema = z.object({ end: EndedCallSchema })

/**
 * One item of `POST /call/upsert_batch`. As the reference's `CallBatchStartMode | CallBatchEndMode` union: `mode` is
 * any string (defaulting to the branch's name) and the item is a start or an end by the shape of `req`.
 */
export const CallBatchItemSchema = z.union([
  z.object({ mode: z._default(z.string(), 'start'), req: CallStartReqSchema }),
  z.object({ mode: z._default(z.string(), 'end'), req: CallEndReqSchema }),
])
export type CallBatchItem = z.infer<typeof CallBatchItemSchema>

/** `POST /call/upsert_batch` body; every item must name the same project (checked by the handler). */
export const CallCreateBatchReqSchema = z.object({ batch: z.array(CallBatchItemSchema) })

/** `POST /call/read` body. */
export const CallReadReqSchema = z.object({
  project_id: z.string(),
  id: z.string(),
  include_costs: z._default(LaxBoolSchema, false),
  include_storage_size: z._default(LaxBoolSchema, false),
  include_total_storage_size: z._default(LaxBoolSchema, false),
})

/** `POST /call/update` body. */
export const CallUpdateReqSchema = z.object({
  project_id: z.string(),
  call_id: z.string(),
  display_name: optString,
  wb_user_id: optString,
})

/** `POST /calls/delete` body. */
export const CallsDeleteReqSchema = z.object({
  project_id: z.string(),
  call_ids: z.array(z.string()),
  wb_user_id: optString,
})

const optList = z.optional(z.nullable(z.array(z.string())))

/** `CallsFilter`: every field optional; empty lists are no filter except `thread_ids`. */
export const CallsFilterSchema = z.object({
  op_names: optList,
  input_refs: optList,
  output_refs: optList,
  parent_ids: optList,
  trace_ids: optList,
  call_ids: optList,
  thread_ids: optList,
  turn_ids: optList,
  trace_roots_only: z.optional(z.nullable(LaxBoolSchema)),
  wb_user_ids: optList,
  wb_run_ids: optList,
})
export type CallsFilter = z.infer<typeof CallsFilterSchema>

/** One sort key. */
export const SortBySchema = z.object({ field: z.string(), direction: z.enum(['asc', 'desc']) })
export type SortBy = z.infer<typeof SortBySchema>

/** `POST /calls/stream_query` body. */
export const CallsQueryReqSchema = z.object({
  project_id: z.string(),
  filter: z.optional(z.nullable(CallsFilterSchema)),
  limit: optInt,
  offset: optInt,
  sort_by: z.optional(z.nullable(z.array(SortBySchema))),
  query: z.optional(z.nullable(QuerySchema)),
  include_costs: z._default(LaxBoolSchema, false),
  include_feedback: z._default(LaxBoolSchema, false),
  include_storage_size: z._default(LaxBoolSchema, false),
  include_total_storage_size: z._default(LaxBoolSchema, false),
  columns: optList,
  expand_columns: optList,
  return_expanded_column_values: z._default(LaxBoolSchema, true),
  latest_only: z._default(LaxBoolSchema, false),
  include_usernames: z._default(LaxBoolSchema, false),
})
export type CallsQueryReq = z.infer<typeof CallsQueryReqSchema>

/** `POST /calls/query_stats` body. */
export const CallsQueryStatsReqSchema = z.object({
  project_id: z.string(),
  filter: z.optional(z.nullable(CallsFilterSchema)),
  query: z.optional(z.nullable(QuerySchema)),
  limit: optInt,
  include_total_storage_size: z._default(LaxBoolSchema, false),
  expand_columns: optList,
})
export type CallsQueryStatsReq = z.infer<typeof CallsQueryStatsReqSchema>

/** `POST /trace/usage` body. */
export const TraceUsageReqSchema = z.object({
  project_id: z.string(),
  filter: z.optional(z.nullable(CallsFilterSchema)),
  query: z.optional(z.nullable(QuerySchema)),
  include_costs: z._default(LaxBoolSchema, false),
  limit: z._default(LaxIntSchema, 10_000),
})
export type TraceUsageReq = z.infer<typeof TraceUsageReqSchema>

/** `POST /calls/usage` body. */
export const CallsUsageReqSchema = z.object({
  project_id: z.string(),
  call_ids: z.array(z.string()),
  include_costs: z._default(LaxBoolSchema, false),
  limit: z._default(LaxIntSchema, 10_000),
})
export type CallsUsageReq = z.infer<typeof CallsUsageReqSchema>
