import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { listProjectTags } from '#shared/tracing/object-labels'
import { route } from './route.js'

/** `GET /tags?project_id=`: sorted distinct tags of a project. */
export const app = createTracingApp().on(route.method, route.path, validate('query', route.query), async (c) => {
  const tags = await listProjectTags(c.req.valid('query').project_id)
  return c.json({ tags }, 200)
})

export const handler = lambdaHandler(app)
