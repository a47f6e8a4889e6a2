import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { updateCallDisplayName } from '#shared/tracing/call-ops'
import { route } from './route.js'

/** `POST /call/update`: sets `display_name`, the only updatable field. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const req = c.req.valid('json')
  await updateCallDisplayName(req.project_id, req.call_id, req.display_name)
  return c.json({}, 200)
})

export const handler = lambdaHandler(app)
