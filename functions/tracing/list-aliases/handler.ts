import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ProjectQuerySchema } from '#shared/schemas/obj'
import { listProjectAliases } from '#shared/tracing/object-labels'

/** `GET /aliases?project_id=`: sorted distinct aliases of a project (`latest` included). */
export const app = createTracingApp().get('/aliases', validate('query', ProjectQuerySchema), async (c) => {
  const aliases = await listProjectAliases(c.req.valid('query').project_id)
  return c.json({ aliases }, 200)
})

export const handler = handle(app)
