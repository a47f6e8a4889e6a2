import { declareRoute } from '#shared/routes/declare'
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
})
