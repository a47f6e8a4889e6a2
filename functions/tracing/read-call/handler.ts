import { createTracingApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { readCall } from '#shared/tracing/call-ops'
import { route } from './route.js'

/** `POST /call/read`: one call with derived summary, or `{call: null}`. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const req = c.req.valid('json')
  return c.json({ call: await readCall(req.project_id, req.id, req) }, 200)
})

export const handler = lambdaStreamHandler(app)
