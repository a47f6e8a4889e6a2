import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_CALL_END } from '#shared/routes/example-ids'
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
      end: EXAMPLE_CALL_END,
    },
    response: {},
  },
})
