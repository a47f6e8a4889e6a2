import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, object_id: EXAMPLE_IDS.objectId, digests: [EXAMPLE_IDS.objectDigest] },
  },
})
