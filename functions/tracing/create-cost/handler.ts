import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CostCreateReqSchema } from '#shared/schemas/cost'
import { createCosts } from '#shared/tracing/cost-ops'

/** `POST /cost/create`: project-level LLM prices, created by the caller; retries with `X-Weave-Retry-Id` add nothing. */
export const app = createTracingApp().post('/cost/create', validate('json', CostCreateReqSchema), async (c) => {
  return c.json(await createCosts(c.req.valid('json'), c.get('auth').userId, c.req.header('x-weave-retry-id')), 200)
})

export const handler = handle(app)
