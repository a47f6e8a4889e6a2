import { declareRoute } from '#shared/routes/declare'
import { CallReadReqSchema } from '#shared/schemas/call'
import { CallReadResSchema } from '#shared/schemas/call-response'

/** `POST /call/read`: the route tracing/read-call serves. */
export const route = declareRoute({
  id: 'tracing/read-call',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/call/read',
  summary: 'Read one call',
  body: CallReadReqSchema,
  response: CallReadResSchema,
})
