import { declareRoute } from '#shared/routes/declare'
import { ProjectQuerySchema } from '#shared/schemas/obj'
import { AliasesResSchema } from '#shared/schemas/obj-response'

/** `GET /aliases`: the route tracing/list-aliases serves. */
export const route = declareRoute({
  id: 'tracing/list-aliases',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/aliases',
  summary: 'Aliases used in a project',
  query: ProjectQuerySchema,
  response: AliasesResSchema,
})
