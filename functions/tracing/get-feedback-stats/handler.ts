import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { feedbackStats } from '#shared/tracing/feedback-stats'
import { route } from './route.js'

/** `POST /feedback/stats`: time-bucketed aggregates of payload values over a window of at most 31 days. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await feedbackStats(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
