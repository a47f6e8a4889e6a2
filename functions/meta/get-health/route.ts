import { declareRoute } from '#shared/routes/declare'
import { HealthResSchema } from '#shared/schemas/meta'

/** `GET /health`: the route meta/get-health serves. */
export const route = declareRoute({
  id: 'meta/get-health',
  family: 'meta',
  access: 'none',
  auth: false,
  method: 'GET',
  path: '/health',
  summary: 'Liveness probe',
  response: HealthResSchema,
  example: { response: { status: 'ok' } },
})
