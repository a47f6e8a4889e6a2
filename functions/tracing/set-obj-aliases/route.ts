import { declareRoute } from '#shared/routes/declare'
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
})
