import * as z from 'zod/mini'
import { LaxIntSchema } from '#shared/schemas/pydantic-lax'

// The checkpoint routes of W&B's serverless RL preview API as ART's client calls them (docs/training.md §6): ART lists
// checkpoints as an OpenAI-style cursor page (`AsyncCursorPage[Checkpoint]`, which reads `data` and `has_more` and asks
// for the next page with `after=<last id>`) and deletes them by step. Loom does not train, so it holds none.

/** Query of `GET /v1/preview/models/{model_id}/checkpoints` (ART `CheckpointListParams`). */
export const ListCheckpointsQuerySchema = z.object({
  /** The id of the last checkpoint of the previous page. */
  after: z.optional(z.string()),
  limit: z.optional(z.pipe(LaxIntSchema, z.int().check(z.minimum(1), z.maximum(100)))),
  order: z.optional(z.enum(['asc', 'desc'])),
})

/** One checkpoint (ART `Checkpoint`: `{id, step, metrics}`). */
export const CheckpointSchema = z.object({
  id: z.string(),
  step: z.int(),
  metrics: z.record(z.string(), z.number()),
})

/** Answer of `GET /v1/preview/models/{model_id}/checkpoints`: a cursor page. */
export const CheckpointPageSchema = z.object({
  data: z.array(CheckpointSchema),
  has_more: z.boolean(),
})
export type CheckpointPage = z.infer<typeof CheckpointPageSchema>

/** Body of `DELETE /v1/preview/models/{model_id}/checkpoints` (ART `Checkpoints.delete`). */
export const DeleteCheckpointsReqSchema = z.looseObject({ steps: z.array(z.int()) })

/** Answer of `DELETE /v1/preview/models/{model_id}/checkpoints` (ART `DeleteCheckpointsResponse`). */
export const DeleteCheckpointsResSchema = z.object({
  deleted_count: z.int(),
  not_found_steps: z.array(z.int()),
})
export type DeleteCheckpointsRes = z.infer<typeof DeleteCheckpointsResSchema>
