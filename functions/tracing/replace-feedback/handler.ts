import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { FeedbackReplaceReqSchema } from '#shared/schemas/feedback'
import { replaceFeedback } from '#shared/tracing/feedback'

/** `POST /feedback/replace`: replaces a feedback row by a new one (new id). */
export const app = createTracingApp().post(
  '/feedback/replace',
  validate('json', FeedbackReplaceReqSchema),
  async (c) => {
    const res = await replaceFeedback(c.get('auth'), c.req.valid('json'), c.req.header('x-weave-retry-id'))
    return c.json(res, 200)
  },
)

export const handler = handle(app)
