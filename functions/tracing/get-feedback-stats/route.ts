import { declareRoute } from '#shared/routes/declare'
import { FeedbackStatsResSchema } from '#shared/schemas/feedback-response'
import { FeedbackStatsReqSchema } from '#shared/schemas/feedback-stats'

/** `POST /feedback/stats`: the route tracing/get-feedback-stats serves. */
export const route = declareRoute({
  id: 'tracing/get-feedback-stats',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/feedback/stats',
  summary: 'Time-bucketed feedback statistics',
  body: FeedbackStatsReqSchema,
  response: FeedbackStatsResSchema,
})
