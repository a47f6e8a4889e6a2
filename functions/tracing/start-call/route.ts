import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
      start: {
        project_id: EXAMPLE_IDS.projectId,
        id: EXAMPLE_IDS.callId,
        op_name: EXAMPLE_IDS.opName,
        trace_id: EXAMPLE_IDS.traceId,
        started_at: '2026-11-27T12:00:00.000Z',
        attributes: { weave: { client_version: '0.11.0', source: 'js-sdk' } },
        inputs: { text: 'Loom serves each endpoint from its own Lambda function.' },
      },
    },
    response: { id: EXAMPLE_IDS.callId, trace_id: EXAMPLE_IDS.traceId },
  },
})
