import { declareRoute } from '#shared/routes/declare'

/** `GET /openapi.json`: the route meta/get-openapi serves. */
export const route = declareRoute({
  id: 'meta/get-openapi',
  family: 'meta',
  access: 'none',
  auth: false,
  method: 'GET',
  path: '/openapi.json',
  summary: 'This OpenAPI 3.1 document',
})
