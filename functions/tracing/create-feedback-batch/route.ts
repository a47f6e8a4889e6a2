import { declareRoute } from '#shared/routes/declare'
import { FeedbackBatchCreateReqSchema } from '#shared/schemas/feedback'
import { FeedbackBatchCreateResSchema } from '#shared/schemas/feedback-response'

/** `POST /feedback/batch/create`: the route tracing/create-feedback-batch serves. */
export const route = declareRoute({
  id: 'tracing/create-feedback-batch',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/feedback/batch/create',
  summary: 'Record several feedback rows',
  body: FeedbackBatchCreateReqSchema,
  response: FeedbackBatchCreateResSchema,
})
