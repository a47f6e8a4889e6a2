import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { queryTableStats } from '#shared/tracing/tables'
import { route } from './route.js'

/** `POST /table/query_stats`: the row count of a table. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await queryTableStats(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
