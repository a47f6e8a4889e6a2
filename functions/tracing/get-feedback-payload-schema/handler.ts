import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { FeedbackPayloadSchemaReqSchema } from '#shared/schemas/feedback-stats'
import { feedbackPayloadSchema } from '#shared/tracing/feedback-payload-schema'

/** `POST /feedback/payload_schema`: leaf paths and value types found in recent payloads of a window. */
export const app = createTracingApp().post(
  '/feedback/payload_schema',
  validate('json', FeedbackPayloadSchemaReqSchema),
  async (c) => {
    const res = await feedbackPayloadSchema(c.req.valid('json'))
    return c.json(res, 200)
  },
)

export const handler = handle(app)
