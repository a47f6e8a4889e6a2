import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_CALL_START, EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallStartReqSchema } from '#shared/schemas/call'
import { CallStartResSchema } from '#shared/schemas/call-response'

/** `POST /call/start`: the route tracing/start-call serves. */
export const route = declareRoute({
  id: 'tracing/start-call',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/call/start',
  summary: 'Start a call',
  body: CallStartReqSchema,
  response: CallStartResSchema,
  example: {
    body: {
      start: EXAMPLE_CALL_START,
    },
    response: { id: EXAMPLE_IDS.callId, trace_id: EXAMPLE_IDS.traceId },
  },
})
