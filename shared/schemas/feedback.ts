import * as z from 'zod/mini'
import { SortBySchema } from '#shared/schemas/obj'
import { LaxIntSchema, LaxNumberSchema } from '#shared/schemas/pydantic-lax'
import { QuerySchema } from '#shared/schemas/query'

const optString = () => z.optional(z.nullable(z.string()))

/** `FeedbackCreateReq` (newest, with scorer and span fields and their defaults). */
export const FeedbackCreateReqSchema = z.looseObject({
  id: optString(),
  project_id: z.string(),
  weave_ref: z.string(),
  creator: optString(),
  feedback_type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  annotation_ref: optString(),
  runnable_ref: optString(),
  call_ref: optString(),
  trigger_ref: optString(),
  queue_id: optString(),
  scorer_tags: z._default(z.array(z.string()), []),
  scorer_tag_reasons: z._default(z.record(z.string(), z.string()), {}),
  scorer_tag_confidences: z._default(z.record(z.string(), LaxNumberSchema), {}),
  scorer_ratings: z._default(z.record(z.string(), LaxNumberSchema), {}),
  scorer_rating_reasons: z._default(z.record(z.string(), z.string()), {}),
  scorer_rating_confidences: z._default(z.record(z.string(), LaxNumberSchema), {}),
  span_agent_name: z._default(z.string(), ''),
  span_agent_version: z._default(z.string(), ''),
  span_status_code: z._default(z.string(), 'UNSET'),
  span_conversation_id: z._default(z.string(), ''),
  span_trace_id: z._default(z.string(), ''),
  scorer_trace_id: z._default(z.string(), ''),
  wb_user_id: optString(),
})
export type FeedbackCreateReq = z.infer<typeof FeedbackCreateReqSchema>

/** `{batch: FeedbackCreateReq[]}`. */
export const FeedbackBatchCreateReqSchema = z.looseObject({ batch: z.array(FeedbackCreateReqSchema) })
export type FeedbackBatchCreateReq = z.infer<typeof FeedbackBatchCreateReqSchema>

/** `FeedbackReplaceReq`: a create request plus the id it replaces. */
export const FeedbackReplaceReqSchema = z.looseObject({ ...FeedbackCreateReqSchema.shape, feedback_id: z.string() })
export type FeedbackReplaceReq = z.infer<typeof FeedbackReplaceReqSchema>

/** A stored feedback row, as `feedback/query` returns it (payload parsed). */
export const FeedbackRowSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  weave_ref: z.string(),
  wb_user_id: z.string(),
  creator: z.nullable(z.string()),
  created_at: z.string(),
  feedback_type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  annotation_ref: z.nullable(z.string()),
  runnable_ref: z.nullable(z.string()),
  call_ref: z.nullable(z.string()),
  trigger_ref: z.nullable(z.string()),
  queue_id: z.nullable(z.string()),
  scorer_tags: z.array(z.string()),
  scorer_tag_reasons: z.record(z.string(), z.string()),
  scorer_tag_confidences: z.record(z.string(), z.number()),
  scorer_ratings: z.record(z.string(), z.number()),
  scorer_rating_reasons: z.record(z.string(), z.string()),
  scorer_rating_confidences: z.record(z.string(), z.number()),
  span_agent_name: z.string(),
  span_agent_version: z.string(),
  span_status_code: z.string(),
  span_conversation_id: z.string(),
  span_trace_id: z.string(),
  scorer_trace_id: z.string(),
})
export type FeedbackRow = z.infer<typeof FeedbackRowSchema>

/** `FeedbackQueryReq`; `query` is Weave's query language, parsed into the shared AST. */
export const FeedbackQueryReqSchema = z.looseObject({
  project_id: z.string(),
  fields: z.optional(z.nullable(z.array(z.string()))),
  query: z.optional(z.nullable(QuerySchema)),
  sort_by: z.optional(z.nullable(z.array(SortBySchema))),
  limit: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  offset: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
})
export type FeedbackQueryReq = z.infer<typeof FeedbackQueryReqSchema>

/** `FeedbackPurgeReq`. */
export const FeedbackPurgeReqSchema = z.looseObject({ project_id: z.string(), query: QuerySchema })
export type FeedbackPurgeReq = z.infer<typeof FeedbackPurgeReqSchema>
