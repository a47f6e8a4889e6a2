import type { RouteDoc } from '#shared/http/openapi'
import { ProjectListResSchema } from '#shared/schemas/project'

/** OpenAPI descriptions of the console's routes and the project list it signs in with. */
export const CONSOLE_DOCS: Record<string, RouteDoc> = {
  'GET /projects': {
    summary:
      "The projects of the key's entities that hold data (calls, objects, tables, files, feedback, preview models or usage)",
    response: ProjectListResSchema,
  },
  'GET /': { summary: 'Redirects a browser to the Loom Console (302 to /console/)', responseMediaType: 'text/html' },
  'GET /console': { summary: 'The Loom Console (302 to /console/)', responseMediaType: 'text/html' },
  'GET /console/:file': {
    summary: 'The Loom Console: `index.html` at /console/ and its content-hashed scripts and styles',
    responseMediaType: 'text/html',
  },
}
