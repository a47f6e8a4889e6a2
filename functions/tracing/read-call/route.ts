import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallReadReqSchema } from '#shared/schemas/call'
import { CallReadResSchema } from '#shared/schemas/call-response'

/** `POST /call/read`: the route tracing/read-call serves. */
export const route = declareRoute({
  id: 'tracing/read-call',
  family: 'tracing',
  access: 'read',
  stream: true,
  auth: true,
  method: 'POST',
  path: '/call/read',
  summary: 'Read one call',
  body: CallReadReqSchema,
  response: CallReadResSchema,
  example: { body: { project_id: EXAMPLE_IDS.projectId, id: EXAMPLE_IDS.callId, include_costs: true } },
})
