import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { createTableFromDigests } from '#shared/tracing/tables'
import { route } from './route.js'

/** `POST /table/create_from_digests`: a table of the project's stored rows, in the order of their digests. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await createTableFromDigests(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
