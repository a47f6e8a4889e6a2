import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CallReadReqSchema } from '#shared/schemas/call'
import { readCall } from '#shared/tracing/call-ops'

/** `POST /call/read`: one call with derived summary, or `{call: null}`. */
export const app = createTracingApp().post('/call/read', validate('json', CallReadReqSchema), async (c) => {
  const req = c.req.valid('json')
  return c.json({ call: await readCall(req.project_id, req.id, req) }, 200)
})

export const handler = handle(app)
