import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { EmptyResSchema } from '#shared/schemas/empty'
import { ObjTagsBodySchema } from '#shared/schemas/obj'

/** `PUT /objs/:object_id/versions/:digest/tags`: the route tracing/add-obj-tags serves. */
export const route = declareRoute({
  id: 'tracing/add-obj-tags',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'PUT',
  path: '/objs/:object_id/versions/:digest/tags',
  summary: 'Tag an object version',
  body: ObjTagsBodySchema,
  response: EmptyResSchema,
  example: {
    params: { object_id: EXAMPLE_IDS.objectId, digest: EXAMPLE_IDS.objectDigest },
    body: { project_id: EXAMPLE_IDS.projectId, tags: ['reviewed'] },
    response: {},
  },
})
