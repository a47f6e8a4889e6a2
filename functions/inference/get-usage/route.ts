import { declareRoute } from '#shared/routes/declare'
import { UsageQuerySchema, UsageReportResSchema } from '#shared/schemas/usage'

/** `GET /v1/usage`: the route inference/get-usage serves. */
export const route = declareRoute({
  id: 'inference/get-usage',
  family: 'inference',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/v1/usage',
  summary: 'Gateway usage per hour, project and model, with costs',
  query: UsageQuerySchema,
  response: UsageReportResSchema,
})
