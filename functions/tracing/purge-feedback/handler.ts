import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { purgeFeedback } from '#shared/tracing/feedback'
import { route } from './route.js'

/** `POST /feedback/purge`: permanently deletes feedback rows named by id. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const req = c.req.valid('json')
  await purgeFeedback(req.project_id, req.query)
  return c.json({}, 200)
})

export const handler = lambdaHandler(app)
