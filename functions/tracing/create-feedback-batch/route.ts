import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    body: {
      batch: [
        {
          project_id: EXAMPLE_IDS.projectId,
          weave_ref: EXAMPLE_IDS.callRef,
          feedback_type: 'wandb.note.1',
          payload: { note: 'Correct, but longer than it needs to be.' },
        },
        {
          project_id: EXAMPLE_IDS.projectId,
          weave_ref: EXAMPLE_IDS.callRef,
          feedback_type: 'wandb.reaction.1',
          payload: { emoji: '👍' },
        },
      ],
    },
  },
})
