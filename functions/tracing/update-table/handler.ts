import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { updateTable } from '#shared/tracing/tables'
import { route } from './route.js'

/** `POST /table/update`: applies row updates to a table and stores the result as a new table. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  // The raw text (cached by Hono) keeps numbers as sent, which the row digests need.
  const res = await updateTable(c.req.valid('json'), await c.req.text())
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
