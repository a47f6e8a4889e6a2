import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallsUsageReqSchema } from '#shared/schemas/call'
import { UsageResSchema } from '#shared/schemas/call-response'

/** `POST /calls/usage`: the route tracing/calls-usage serves. */
export const route = declareRoute({
  id: 'tracing/calls-usage',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/calls/usage',
  summary: 'Complete LLM usage of given calls',
  body: CallsUsageReqSchema,
  response: UsageResSchema,
  example: { body: { project_id: EXAMPLE_IDS.projectId, call_ids: [EXAMPLE_IDS.callId], include_costs: true } },
})
