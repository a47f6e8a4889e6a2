import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CallsUsageReqSchema } from '#shared/schemas/call'
import { callsUsage } from '#shared/tracing/usage'

/** `POST /calls/usage`: complete usage of the requested calls (whole traces), 413 when one trace exceeds `limit`. */
export const app = createTracingApp().post('/calls/usage', validate('json', CallsUsageReqSchema), async (c) => {
  return c.json(await callsUsage(c.req.valid('json')), 200)
})

export const handler = handle(app)
