import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { deleteCalls } from '#shared/tracing/call-ops'
import { route } from './route.js'

/** `POST /calls/delete`: soft-deletes calls and their descendants. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const req = c.req.valid('json')
  return c.json({ num_deleted: await deleteCalls(req.project_id, req.call_ids) }, 200)
})

export const handler = lambdaHandler(app)
