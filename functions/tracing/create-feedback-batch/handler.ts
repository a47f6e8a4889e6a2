import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { createFeedbackBatch } from '#shared/tracing/feedback'
import { route } from './route.js'

/** `POST /feedback/batch/create`: several `feedback/create`s, answered in order. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await createFeedbackBatch(c.get('auth'), c.req.valid('json').batch, c.req.header('x-weave-retry-id'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
