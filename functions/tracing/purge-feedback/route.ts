import { declareRoute } from '#shared/routes/declare'
import { EmptyResSchema } from '#shared/schemas/empty'
import { FeedbackPurgeReqSchema } from '#shared/schemas/feedback'

/** `POST /feedback/purge`: the route tracing/purge-feedback serves. */
export const route = declareRoute({
  id: 'tracing/purge-feedback',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/feedback/purge',
  summary: 'Delete feedback by id',
  body: FeedbackPurgeReqSchema,
  response: EmptyResSchema,
})
