import * as z from 'zod/mini'
import { SortBySchema } from '#shared/schemas/obj'
import { LaxBoolSchema, LaxIntSchema } from '#shared/schemas/pydantic-lax'

/** Per-annotator progress of an item. */
export const AnnotationStateSchema = z.enum(['unstarted', 'in_progress', 'completed', 'skipped'])
export type AnnotationState = z.infer<typeof AnnotationStateSchema>

/** `AnnotationQueueSchema` (also the stored shape). */
export const AnnotationQueueSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  description: z.string(),
  scorer_refs: z.array(z.string()),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
  deleted_at: z.optional(z.nullable(z.string())),
})
export type AnnotationQueue = z.infer<typeof AnnotationQueueSchema>

/** A stored queue item (the call fields copied when it was added). */
export const QueueItemSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  queue_id: z.string(),
  call_id: z.string(),
  call_started_at: z.string(),
  call_ended_at: z.nullable(z.string()),
  call_op_name: z.string(),
  call_trace_id: z.string(),
  display_fields: z.array(z.string()),
  added_by: z.nullable(z.string()),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
  deleted_at: z.optional(z.nullable(z.string())),
})
export type QueueItem = z.infer<typeof QueueItemSchema>

/** One annotator's progress row on one item. */
export const ProgressRowSchema = z.object({
  item_id: z.string(),
  annotator_user_id: z.string(),
  annotation_state: AnnotationStateSchema,
  created_at: z.string(),
  updated_at: z.string(),
})
export type ProgressRow = z.infer<typeof ProgressRowSchema>

/** `AnnotationQueueCreateReq`: `scorer_refs` required. */
export const QueueCreateReqSchema = z.looseObject({
  project_id: z.string(),
  name: z.string(),
  description: z._default(z.string(), ''),
  scorer_refs: z.array(z.string()),
  wb_user_id: z.optional(z.nullable(z.string())),
})
export type QueueCreateReq = z.infer<typeof QueueCreateReqSchema>

/** `AnnotationQueuesQueryReq`. */
export const QueuesQueryReqSchema = z.looseObject({
  project_id: z.string(),
  name: z.optional(z.nullable(z.string())),
  sort_by: z.optional(z.nullable(z.array(SortBySchema))),
  limit: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  offset: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
})
export type QueuesQueryReq = z.infer<typeof QueuesQueryReqSchema>

/** Body of `PUT /annotation_queues/{queue_id}`. */
export const QueueUpdateBodySchema = z.looseObject({
  project_id: z.string(),
  name: z.optional(z.nullable(z.string())),
  description: z.optional(z.nullable(z.string())),
  scorer_refs: z.optional(z.nullable(z.array(z.string()))),
})
export type QueueUpdateBody = z.infer<typeof QueueUpdateBodySchema>

/** Body of `POST /annotation_queues/{queue_id}/items`. */
export const QueueAddCallsBodySchema = z.looseObject({
  project_id: z.string(),
  call_ids: z.array(z.string()),
  display_fields: z.array(z.string()),
})
export type QueueAddCallsBody = z.infer<typeof QueueAddCallsBodySchema>

/** Body of `POST /annotation_queues/{queue_id}/items/query`. */
export const QueueItemsQueryBodySchema = z.looseObject({
  project_id: z.string(),
  filter: z.optional(
    z.nullable(
      z.looseObject({
        id: z.optional(z.nullable(z.string())),
        call_id: z.optional(z.nullable(z.string())),
        call_op_name: z.optional(z.nullable(z.string())),
        call_trace_id: z.optional(z.nullable(z.string())),
        added_by: z.optional(z.nullable(z.string())),
        annotation_states: z.optional(z.nullable(z.array(AnnotationStateSchema))),
      }),
    ),
  ),
  sort_by: z.optional(z.nullable(z.array(SortBySchema))),
  limit: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  offset: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  include_position: z._default(LaxBoolSchema, false),
})
export type QueueItemsQueryBody = z.infer<typeof QueueItemsQueryBodySchema>

/** `{project_id, queue_ids}` of `annotation_queues/stats`. */
export const QueuesStatsReqSchema = z.looseObject({ project_id: z.string(), queue_ids: z.array(z.string()) })
export type QueuesStatsReq = z.infer<typeof QueuesStatsReqSchema>

/** Body of the progress endpoint; the state is checked by the server (400), not the model. */
export const ProgressBodySchema = z.looseObject({ project_id: z.string(), annotation_state: z.string() })
export type ProgressBody = z.infer<typeof ProgressBodySchema>

/** `?project_id=` of the queue GET/DELETE routes. */
export const QueueProjectQuerySchema = z.looseObject({ project_id: z.string() })
