import { declareRoute } from '#shared/routes/declare'
import { projectHeaders } from '#shared/routes/inference-headers'
import { ModelListResSchema } from '#shared/schemas/model-response'

/** `GET /v1/models`: the route inference/list-models serves. */
export const route = declareRoute({
  id: 'inference/list-models',
  family: 'inference',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/v1/models',
  summary: 'List the models the caller may use',
  response: ModelListResSchema,
  headers: projectHeaders('the models listed are those its entity may use'),
})
