import { declareRoute } from '#shared/routes/declare'
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
})
