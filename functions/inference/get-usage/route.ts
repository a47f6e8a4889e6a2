import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: { query: { project: EXAMPLE_IDS.projectId, start: '2026-11-26T00:00:00Z', end: '2026-11-27T00:00:00Z' } },
})
