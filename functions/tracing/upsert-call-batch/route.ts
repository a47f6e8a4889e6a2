import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
        },
        {
          mode: 'end',
          req: {
            end: {
              project_id: EXAMPLE_IDS.projectId,
              id: EXAMPLE_IDS.callId,
              trace_id: EXAMPLE_IDS.traceId,
              ended_at: '2026-11-27T12:00:01.250Z',
              output: 'One Lambda per endpoint.',
              summary: {
                usage: {
                  [EXAMPLE_IDS.model]: { requests: 1, prompt_tokens: 42, completion_tokens: 6, total_tokens: 48 },
                },
              },
            },
          },
        },
      ],
    },
    response: { res: [{ id: EXAMPLE_IDS.callId, trace_id: EXAMPLE_IDS.traceId }, {}] },
  },
})
