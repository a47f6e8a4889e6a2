import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallEndReqSchema } from '#shared/schemas/call'
import { EmptyResSchema } from '#shared/schemas/empty'

/** `POST /call/end`: the route tracing/end-call serves. */
export const route = declareRoute({
  id: 'tracing/end-call',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/call/end',
  summary: 'End a call',
  body: CallEndReqSchema,
  response: EmptyResSchema,
  example: {
    body: {
      end: {
        project_id: EXAMPLE_IDS.projectId,
        id: EXAMPLE_IDS.callId,
        trace_id: EXAMPLE_IDS.traceId,
        ended_at: '2026-11-27T12:00:01.250Z',
        output: 'One Lambda per endpoint.',
        summary: {
          usage: { [EXAMPLE_IDS.model]: { requests: 1, prompt_tokens: 42, completion_tokens: 6, total_tokens: 48 } },
        },
      },
    },
    response: {},
  },
})
