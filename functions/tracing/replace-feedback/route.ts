import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      feedback_id: EXAMPLE_IDS.feedbackId,
      weave_ref: EXAMPLE_IDS.callRef,
      feedback_type: 'wandb.note.1',
      payload: { note: 'Correct and concise.' },
    },
  },
})
