import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { projectHeaders } from '#shared/routes/inference-headers'
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
  // docs/inference.md §12
  headers: projectHeaders('a bare `project` query value is a project of its entity, no `project` the whole entity'),
  query: UsageQuerySchema,
  response: UsageReportResSchema,
  example: { query: { project: EXAMPLE_IDS.projectId, start: '2026-11-26T00:00:00Z', end: '2026-11-27T00:00:00Z' } },
})
