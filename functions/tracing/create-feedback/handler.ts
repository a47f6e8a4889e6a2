import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { FeedbackCreateReqSchema } from '#shared/schemas/feedback'
import { createFeedback } from '#shared/tracing/feedback'

/** `POST /feedback/create`: records one feedback row for the authenticated user. */
export const app = createTracingApp().post('/feedback/create', validate('json', FeedbackCreateReqSchema), async (c) => {
  const res = await createFeedback(c.get('auth'), c.req.valid('json'), c.req.header('x-weave-retry-id'))
  return c.json(res, 200)
})

export const handler = handle(app)
