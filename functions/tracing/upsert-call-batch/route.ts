import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_CALL_END, EXAMPLE_CALL_START, EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallCreateBatchReqSchema } from '#shared/schemas/call'
import { CallUpsertBatchResSchema } from '#shared/schemas/call-response'

/** `POST /call/upsert_batch`: the route tracing/upsert-call-batch serves. */
export const route = declareRoute({
  id: 'tracing/upsert-call-batch',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/call/upsert_batch',
  summary: 'Write call starts and ends in order',
  body: CallCreateBatchReqSchema,
  response: CallUpsertBatchResSchema,
  example: {
    // What the Weave SDKs batch every 200 ms: a call's start and end.
    body: {
      batch: [
        {
          mode: 'start',
          req: {
            start: EXAMPLE_CALL_START,
          },
        },
        {
          mode: 'end',
          req: {
            end: EXAMPLE_CALL_END,
          },
        },
      ],
    },
    response: { res: [{ id: EXAMPLE_IDS.callId, trace_id: EXAMPLE_IDS.traceId }, {}] },
  },
})
