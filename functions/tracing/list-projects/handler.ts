import { listProjects } from '#shared/db/project-repository'
import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { route } from './route.js'

/**
 * `GET /projects`: the projects of the key's entities that hold data (calls, objects, tables, files, feedback,
 * preview models or usage), for the console's project picker. Read-only; only the caller's own entities are read.
 */
export const app = createTracingApp().on(route.method, route.path, async (c) => {
  const principal = c.get('auth')
  return c.json({ projects: await listProjects(principal.entities) }, 200)
})

export const handler = lambdaHandler(app)
