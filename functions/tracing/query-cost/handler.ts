import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { queryCosts } from '#shared/tracing/cost-ops'
import { route } from './route.js'

/** `POST /cost/query`: the project's prices, filtered by the query language. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  return c.json(await queryCosts(c.req.valid('json')), 200)
})

export const handler = lambdaHandler(app)
