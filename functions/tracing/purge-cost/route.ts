import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CostPurgeReqSchema } from '#shared/schemas/cost'
import { EmptyResSchema } from '#shared/schemas/empty'

/** `POST /cost/purge`: the route tracing/purge-cost serves. */
export const route = declareRoute({
  id: 'tracing/purge-cost',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/cost/purge',
  summary: 'Delete project LLM prices by id',
  body: CostPurgeReqSchema,
  response: EmptyResSchema,
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: EXAMPLE_IDS.costId }] } },
    },
    response: {},
  },
})
