import { declareRoute } from '#shared/routes/declare'
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
})
