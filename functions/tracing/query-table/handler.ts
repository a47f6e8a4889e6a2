import { createTracingApp } from '#shared/http/create-app'
import { jsonExactResponse } from '#shared/http/json-exact-response'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { queryTable } from '#shared/tracing/tables'
import { route } from './route.js'

/** `POST /table/query`: rows of a table with their digests. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await queryTable(c.req.valid('json'))
  return jsonExactResponse(c, res, 200)
})

export const handler = lambdaStreamHandler(app)
