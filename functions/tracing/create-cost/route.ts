import { declareRoute } from '#shared/routes/declare'
import { CostCreateResSchema } from '#shared/schemas/call-response'
import { CostCreateReqSchema } from '#shared/schemas/cost'

/** `POST /cost/create`: the route tracing/create-cost serves. */
export const route = declareRoute({
  id: 'tracing/create-cost',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/cost/create',
  summary: 'Create project LLM prices',
  body: CostCreateReqSchema,
  response: CostCreateResSchema,
})
