import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { purgeCosts } from '#shared/tracing/cost-ops'
import { route } from './route.js'

/** `POST /cost/purge`: deletes project prices by id. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const req = c.req.valid('json')
  await purgeCosts(req.project_id, req.query)
  return c.json({}, 200)
})

export const handler = lambdaHandler(app)
