import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { FeedbackPayloadSchemaResSchema } from '#shared/schemas/feedback-response'
import { FeedbackPayloadSchemaReqSchema } from '#shared/schemas/feedback-stats'

/** `POST /feedback/payload_schema`: the route tracing/get-feedback-payload-schema serves. */
export const route = declareRoute({
  id: 'tracing/get-feedback-payload-schema',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/feedback/payload_schema',
  summary: 'Leaf paths and value types of recent feedback payloads',
  body: FeedbackPayloadSchemaReqSchema,
  response: FeedbackPayloadSchemaResSchema,
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      start: '2026-11-20T00:00:00Z',
      end: '2026-11-27T00:00:00Z',
      feedback_type: 'wandb.note.1',
    },
  },
})
