import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { TraceUsageReqSchema } from '#shared/schemas/call'
import { traceUsage } from '#shared/tracing/usage'

/** `POST /trace/usage`: per-call LLM usage including selected descendants, optional costs. */
export const app = createTracingApp().post('/trace/usage', validate('json', TraceUsageReqSchema), async (c) => {
  return c.json(await traceUsage(c.req.valid('json')), 200)
})

export const handler = handle(app)
