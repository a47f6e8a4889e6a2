import { declareRoute } from '#shared/routes/declare'
import { FeedbackReplaceReqSchema } from '#shared/schemas/feedback'
import { FeedbackCreateResSchema } from '#shared/schemas/feedback-response'

/** `POST /feedback/replace`: the route tracing/replace-feedback serves. */
export const route = declareRoute({
  id: 'tracing/replace-feedback',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/feedback/replace',
  summary: 'Replace a feedback row',
  body: FeedbackReplaceReqSchema,
  response: FeedbackCreateResSchema,
})
