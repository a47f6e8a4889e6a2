import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { ProjectQuerySchema } from '#shared/schemas/obj'
import { TagsResSchema } from '#shared/schemas/obj-response'

/** `GET /tags`: the route tracing/list-tags serves. */
export const route = declareRoute({
  id: 'tracing/list-tags',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/tags',
  summary: 'Tags used in a project',
  query: ProjectQuerySchema,
  response: TagsResSchema,
  example: { query: { project_id: EXAMPLE_IDS.projectId }, response: { tags: ['reviewed'] } },
})
