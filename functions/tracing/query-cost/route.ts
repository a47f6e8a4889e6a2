import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CostQueryResSchema } from '#shared/schemas/call-response'
import { CostQueryReqSchema } from '#shared/schemas/cost'

/** `POST /cost/query`: the route tracing/query-cost serves. */
export const route = declareRoute({
  id: 'tracing/query-cost',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/cost/query',
  summary: 'Query project LLM prices',
  body: CostQueryReqSchema,
  response: CostQueryResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, sort_by: [{ field: 'created_at', direction: 'desc' }], limit: 10 },
  },
})
