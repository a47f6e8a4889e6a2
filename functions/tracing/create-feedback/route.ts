import { declareRoute } from '#shared/routes/declare'
import { FeedbackCreateReqSchema } from '#shared/schemas/feedback'
import { FeedbackCreateResSchema } from '#shared/schemas/feedback-response'

/** `POST /feedback/create`: the route tracing/create-feedback serves. */
export const route = declareRoute({
  id: 'tracing/create-feedback',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/feedback/create',
  summary: 'Record feedback',
  body: FeedbackCreateReqSchema,
  response: FeedbackCreateResSchema,
})
