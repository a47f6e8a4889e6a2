import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { EmptyResSchema } from '#shared/schemas/empty'
import { ObjSetAliasesBodySchema } from '#shared/schemas/obj'

/** `PUT /objs/:object_id/aliases`: the route tracing/set-obj-aliases serves. */
export const route = declareRoute({
  id: 'tracing/set-obj-aliases',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'PUT',
  path: '/objs/:object_id/aliases',
  summary: 'Point aliases at an object version',
  body: ObjSetAliasesBodySchema,
  response: EmptyResSchema,
  example: {
    params: { object_id: EXAMPLE_IDS.objectId },
    body: { project_id: EXAMPLE_IDS.projectId, digest: EXAMPLE_IDS.objectDigest, aliases: ['production'] },
    response: {},
  },
})
