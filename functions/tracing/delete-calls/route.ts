import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallsDeleteReqSchema } from '#shared/schemas/call'
import { CallsDeleteResSchema } from '#shared/schemas/call-response'

/** `POST /calls/delete`: the route tracing/delete-calls serves. */
export const route = declareRoute({
  id: 'tracing/delete-calls',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/calls/delete',
  summary: 'Soft-delete calls and their descendants',
  body: CallsDeleteReqSchema,
  response: CallsDeleteResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, call_ids: [EXAMPLE_IDS.callId] },
    response: { num_deleted: 1 },
  },
})
