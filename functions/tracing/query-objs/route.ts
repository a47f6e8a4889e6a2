import { declareRoute } from '#shared/routes/declare'
import { ObjQueryReqSchema } from '#shared/schemas/obj'
import { ObjQueryResSchema } from '#shared/schemas/obj-response'

/** `POST /objs/query`: the route tracing/query-objs serves. */
export const route = declareRoute({
  id: 'tracing/query-objs',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/objs/query',
  summary: 'Query object versions',
  body: ObjQueryReqSchema,
  response: ObjQueryResSchema,
})
