import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CreatePreviewModelReqSchema, PreviewModelViewSchema } from '#shared/schemas/preview-model'

/** `POST /v1/preview/models`: the route training/create-preview-model serves. */
export const route = declareRoute({
  id: 'training/create-preview-model',
  family: 'training',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/v1/preview/models',
  summary: 'Register a preview model (returns the existing one with return_existing)',
  body: CreatePreviewModelReqSchema,
  response: PreviewModelViewSchema,
  example: {
    body: {
      entity: EXAMPLE_IDS.entity,
      project: EXAMPLE_IDS.project,
      name: 'agent-001',
      base_model: EXAMPLE_IDS.model,
    },
  },
})
