import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { feedbackPayloadSchema } from '#shared/tracing/feedback-payload-schema'
import { route } from './route.js'

/** `POST /feedback/payload_schema`: leaf paths and value types found in recent payloads of a window. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await feedbackPayloadSchema(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
