import { createTracingApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { queryFeedback } from '#shared/tracing/feedback'
import { route } from './route.js'

/** `POST /feedback/query`: feedback rows matching a query, with the total count. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await queryFeedback(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = lambdaStreamHandler(app)
