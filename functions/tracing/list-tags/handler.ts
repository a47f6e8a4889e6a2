import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ProjectQuerySchema } from '#shared/schemas/obj'
import { listProjectTags } from '#shared/tracing/object-labels'

/** `GET /tags?project_id=`: sorted distinct tags of a project. */
export const app = createTracingApp().get('/tags', validate('query', ProjectQuerySchema), async (c) => {
  const tags = await listProjectTags(c.req.valid('query').project_id)
  return c.json({ tags }, 200)
})

export const handler = handle(app)
