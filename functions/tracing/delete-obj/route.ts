import { declareRoute } from '#shared/routes/declare'
import { ObjDeleteReqSchema } from '#shared/schemas/obj'
import { ObjDeleteResSchema } from '#shared/schemas/obj-response'

/** `POST /obj/delete`: the route tracing/delete-obj serves. */
export const route = declareRoute({
  id: 'tracing/delete-obj',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/obj/delete',
  summary: 'Soft-delete object versions',
  body: ObjDeleteReqSchema,
  response: ObjDeleteResSchema,
})
