import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      costs: {
        [EXAMPLE_IDS.model]: {
          prompt_token_cost: 2e-7,
          completion_token_cost: 6e-7,
          prompt_token_cost_unit: 'USD',
          completion_token_cost_unit: 'USD',
        },
      },
    },
    response: { ids: [[EXAMPLE_IDS.model, EXAMPLE_IDS.costId]] },
  },
})
