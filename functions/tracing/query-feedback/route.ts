import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { FeedbackQueryReqSchema } from '#shared/schemas/feedback'
import { FeedbackQueryResSchema } from '#shared/schemas/feedback-response'

/** `POST /feedback/query`: the route tracing/query-feedback serves. */
export const route = declareRoute({
  id: 'tracing/query-feedback',
  family: 'tracing',
  access: 'read',
  stream: true,
  auth: true,
  method: 'POST',
  path: '/feedback/query',
  summary: 'Query feedback',
  body: FeedbackQueryReqSchema,
  response: FeedbackQueryResSchema,
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      query: { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: EXAMPLE_IDS.callRef }] } },
      sort_by: [{ field: 'created_at', direction: 'desc' }],
      limit: 100,
    },
  },
})
