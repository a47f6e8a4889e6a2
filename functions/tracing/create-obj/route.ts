import { declareRoute } from '#shared/routes/declare'
import { ObjCreateReqSchema } from '#shared/schemas/obj'
import { ObjCreateResSchema } from '#shared/schemas/obj-response'

/** `POST /obj/create`: the route tracing/create-obj serves. */
export const route = declareRoute({
  id: 'tracing/create-obj',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/obj/create',
  summary: 'Publish an object version',
  body: ObjCreateReqSchema,
  response: ObjCreateResSchema,
})
