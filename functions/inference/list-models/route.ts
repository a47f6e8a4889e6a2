import { declareRoute } from '#shared/routes/declare'

/** `GET /v1/models`: the route inference/list-models serves. */
export const route = declareRoute({
  id: 'inference/list-models',
  family: 'inference',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/v1/models',
  summary: 'List the models the caller may use',
})
