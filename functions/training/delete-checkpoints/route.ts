import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { DeleteCheckpointsReqSchema, DeleteCheckpointsResSchema } from '#shared/schemas/checkpoint'

/** `DELETE /v1/preview/models/:model_id/checkpoints`: the route training/delete-checkpoints serves. */
export const route = declareRoute({
  id: 'training/delete-checkpoints',
  family: 'training',
  // Only the model is read: Loom holds no checkpoint to delete.
  access: 'read',
  auth: true,
  method: 'DELETE',
  path: '/v1/preview/models/:model_id/checkpoints',
  summary: "Delete a model's checkpoints by step (finds none: Loom does not train)",
  body: DeleteCheckpointsReqSchema,
  response: DeleteCheckpointsResSchema,
  example: {
    params: { model_id: EXAMPLE_IDS.modelId },
    body: { steps: [1, 2] },
    response: { deleted_count: 0, not_found_steps: [1, 2] },
  },
})
