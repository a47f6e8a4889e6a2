import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { ObjReadReqSchema } from '#shared/schemas/obj'
import { ObjReadResSchema } from '#shared/schemas/obj-response'

/** `POST /obj/read`: the route tracing/read-obj serves. */
export const route = declareRoute({
  id: 'tracing/read-obj',
  family: 'tracing',
  access: 'read',
  stream: true,
  auth: true,
  method: 'POST',
  path: '/obj/read',
  summary: 'Read an object version',
  body: ObjReadReqSchema,
  response: ObjReadResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, object_id: EXAMPLE_IDS.objectId, digest: EXAMPLE_IDS.objectDigest },
  },
})
