import { declareRoute } from '#shared/routes/declare'
import { CallUpdateReqSchema } from '#shared/schemas/call'
import { EmptyResSchema } from '#shared/schemas/empty'

/** `POST /call/update`: the route tracing/update-call serves. */
export const route = declareRoute({
  id: 'tracing/update-call',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/call/update',
  summary: "Update a call's display name",
  body: CallUpdateReqSchema,
  response: EmptyResSchema,
})
