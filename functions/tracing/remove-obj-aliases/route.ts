import { declareRoute } from '#shared/routes/declare'
import { EmptyResSchema } from '#shared/schemas/empty'
import { ObjRemoveAliasesBodySchema } from '#shared/schemas/obj'

/** `POST /objs/:object_id/aliases/remove`: the route tracing/remove-obj-aliases serves. */
export const route = declareRoute({
  id: 'tracing/remove-obj-aliases',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/objs/:object_id/aliases/remove',
  summary: 'Remove aliases of an object',
  body: ObjRemoveAliasesBodySchema,
  response: EmptyResSchema,
})
