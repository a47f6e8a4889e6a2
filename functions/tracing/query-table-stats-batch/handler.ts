import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { queryTableStatsBatch } from '#shared/tracing/tables'
import { route } from './route.js'

/** `POST /table/query_stats_batch`: row counts (and storage sizes) of the known tables among the digests. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await queryTableStatsBatch(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
