import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CheckpointPageSchema, ListCheckpointsQuerySchema } from '#shared/schemas/checkpoint'

/** `GET /v1/preview/models/:model_id/checkpoints`: the route training/list-checkpoints serves. */
export const route = declareRoute({
  id: 'training/list-checkpoints',
  family: 'training',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/v1/preview/models/:model_id/checkpoints',
  summary: "List a model's checkpoints (always empty: Loom does not train)",
  query: ListCheckpointsQuerySchema,
  response: CheckpointPageSchema,
  example: {
    // ART's `model.get_step()`: the newest checkpoint's step, 0 when the page is empty.
    params: { model_id: EXAMPLE_IDS.modelId },
    query: { limit: '1', order: 'desc' },
    response: { data: [], has_more: false },
  },
})
