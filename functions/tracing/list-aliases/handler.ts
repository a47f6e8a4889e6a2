import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { listProjectAliases } from '#shared/tracing/object-labels'
import { route } from './route.js'

/** `GET /aliases?project_id=`: sorted distinct aliases of a project (`latest` included). */
export const app = createTracingApp().on(route.method, route.path, validate('query', route.query), async (c) => {
  const aliases = await listProjectAliases(c.req.valid('query').project_id)
  return c.json({ aliases }, 200)
})

export const handler = lambdaHandler(app)
