import { declareRoute } from '#shared/routes/declare'
import { CallReadReqSchema } from '#shared/schemas/call'

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
})
