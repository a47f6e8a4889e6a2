import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CostPurgeReqSchema } from '#shared/schemas/cost'
import { purgeCosts } from '#shared/tracing/cost-ops'

/** `POST /cost/purge`: deletes project prices by id. */
export const app = createTracingApp().post('/cost/purge', validate('json', CostPurgeReqSchema), async (c) => {
  const req = c.req.valid('json')
  await purgeCosts(req.project_id, req.query)
  return c.json({}, 200)
})

export const handler = handle(app)
