import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { FeedbackQueryReqSchema } from '#shared/schemas/feedback'
import { queryFeedback } from '#shared/tracing/feedback'

/** `POST /feedback/query`: feedback rows matching a query, with the total count. */
export const app = createTracingApp().post('/feedback/query', validate('json', FeedbackQueryReqSchema), async (c) => {
  const res = await queryFeedback(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = handle(app)
