import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { ListPreviewModelsQuerySchema, ListPreviewModelsResSchema } from '#shared/schemas/preview-model'

/** `GET /v1/preview/models`: the route training/list-preview-models serves. */
export const route = declareRoute({
  id: 'training/list-preview-models',
  family: 'training',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/v1/preview/models',
  summary: "List the caller's preview models",
  query: ListPreviewModelsQuerySchema,
  response: ListPreviewModelsResSchema,
  example: { query: { entity: EXAMPLE_IDS.entity, project: EXAMPLE_IDS.project } },
})
