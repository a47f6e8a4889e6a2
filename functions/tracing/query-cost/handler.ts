import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CostQueryReqSchema } from '#shared/schemas/cost'
import { queryCosts } from '#shared/tracing/cost-ops'

/** `POST /cost/query`: the project's prices, filtered by the query language. */
export const app = createTracingApp().post('/cost/query', validate('json', CostQueryReqSchema), async (c) => {
  return c.json(await queryCosts(c.req.valid('json')), 200)
})

export const handler = handle(app)
