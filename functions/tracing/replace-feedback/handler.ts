import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { replaceFeedback } from '#shared/tracing/feedback'
import { route } from './route.js'

/** `POST /feedback/replace`: replaces a feedback row by a new one (new id). */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await replaceFeedback(c.get('auth'), c.req.valid('json'), c.req.header('x-weave-retry-id'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
