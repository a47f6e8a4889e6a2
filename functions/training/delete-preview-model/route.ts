import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { DeletePreviewModelResSchema } from '#shared/schemas/preview-model'

/** `DELETE /v1/preview/models/:model_id`: the route training/delete-preview-model serves. */
export const route = declareRoute({
  id: 'training/delete-preview-model',
  family: 'training',
  access: 'write',
  auth: true,
  method: 'DELETE',
  path: '/v1/preview/models/:model_id',
  summary: 'Delete a preview model',
  response: DeletePreviewModelResSchema,
  example: {
    params: { model_id: EXAMPLE_IDS.modelId },
    response: { id: EXAMPLE_IDS.modelId, deleted: true },
  },
})
