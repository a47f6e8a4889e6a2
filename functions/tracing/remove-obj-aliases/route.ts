import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    params: { object_id: EXAMPLE_IDS.objectId },
    body: { project_id: EXAMPLE_IDS.projectId, aliases: ['production'] },
    response: {},
  },
})
