import { declareRoute } from '#shared/routes/declare'
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
})
