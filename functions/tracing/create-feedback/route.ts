import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      weave_ref: EXAMPLE_IDS.callRef,
      feedback_type: 'wandb.note.1',
      payload: { note: 'Correct, but longer than it needs to be.' },
    },
  },
})
