import { declareRoute } from '#shared/routes/declare'
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
})
