import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallUpdateReqSchema } from '#shared/schemas/call'
import { EmptyResSchema } from '#shared/schemas/empty'

/** `POST /call/update`: the route tracing/update-call serves. */
export const route = declareRoute({
  id: 'tracing/update-call',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/call/update',
  summary: "Update a call's display name",
  body: CallUpdateReqSchema,
  response: EmptyResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, call_id: EXAMPLE_IDS.callId, display_name: 'Summarize (retry)' },
    response: {},
  },
})
