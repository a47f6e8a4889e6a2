import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { callsQueryStats } from '#shared/tracing/call-stats'
import { route } from './route.js'

/** `POST /calls/query_stats`: count (capped at `limit`), `has_more` and optional total storage size. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  return c.json(await callsQueryStats(c.req.valid('json')), 200)
})

export const handler = lambdaHandler(app)
