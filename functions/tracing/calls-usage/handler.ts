import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { callsUsage } from '#shared/tracing/usage'
import { route } from './route.js'

/** `POST /calls/usage`: complete usage of the requested calls (whole traces), 413 when one trace exceeds `limit`. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  return c.json(await callsUsage(c.req.valid('json')), 200)
})

export const handler = lambdaHandler(app)
