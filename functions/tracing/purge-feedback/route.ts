import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: EXAMPLE_IDS.feedbackId }] } },
    },
    response: {},
  },
})
