import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CallUpdateReqSchema } from '#shared/schemas/call'
import { updateCallDisplayName } from '#shared/tracing/call-ops'

/** `POST /call/update`: sets `display_name`, the only updatable field. */
export const app = createTracingApp().post('/call/update', validate('json', CallUpdateReqSchema), async (c) => {
  const req = c.req.valid('json')
  await updateCallDisplayName(req.project_id, req.call_id, req.display_name)
  return c.json({}, 200)
})

export const handler = handle(app)
