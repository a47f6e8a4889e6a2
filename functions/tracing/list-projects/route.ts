import { declareRoute } from '#shared/routes/declare'
import { ProjectListResSchema } from '#shared/schemas/project'

/** `GET /projects`: the route tracing/list-projects serves. */
export const route = declareRoute({
  id: 'tracing/list-projects',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/projects',
  summary:
    "The projects of the key's entities that hold data (calls, objects, tables, files, feedback, preview models or usage)",
  response: ProjectListResSchema,
})
