import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { traceUsage } from '#shared/tracing/usage'
import { route } from './route.js'

/** `POST /trace/usage`: per-call LLM usage including selected descendants, optional costs. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  return c.json(await traceUsage(c.req.valid('json')), 200)
})

export const handler = lambdaHandler(app)
