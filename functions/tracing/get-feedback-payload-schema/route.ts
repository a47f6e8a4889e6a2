import { declareRoute } from '#shared/routes/declare'
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
})
