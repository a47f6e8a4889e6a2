import { createTracingApp } from '#shared/http/create-app'
import { jsonExactResponse } from '#shared/http/json-exact-response'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { feedbackStats } from '#shared/tracing/feedback-stats'
import { route } from './route.js'

/**
 * `POST /feedback/stats`: time-bucketed aggregates of payload values over a window of at most 31 days (`window_stats`
 * values are Python floats, written exactly).
 */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await feedbackStats(c.req.valid('json'))
  return jsonExactResponse(c, res, 200)
})

export const handler = lambdaHandler(app)
