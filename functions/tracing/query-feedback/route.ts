import { declareRoute } from '#shared/routes/declare'
import { FeedbackQueryReqSchema } from '#shared/schemas/feedback'
import { FeedbackQueryResSchema } from '#shared/schemas/feedback-response'

/** `POST /feedback/query`: the route tracing/query-feedback serves. */
export const route = declareRoute({
  id: 'tracing/query-feedback',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/feedback/query',
  summary: 'Query feedback',
  body: FeedbackQueryReqSchema,
  response: FeedbackQueryResSchema,
})
