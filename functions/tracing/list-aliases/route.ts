import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: { query: { project_id: EXAMPLE_IDS.projectId }, response: { aliases: ['production'] } },
})
