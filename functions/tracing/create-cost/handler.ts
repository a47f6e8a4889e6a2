import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { createCosts } from '#shared/tracing/cost-ops'
import { route } from './route.js'

/** `POST /cost/create`: project-level LLM prices, created by the caller; retries with `X-Weave-Retry-Id` add nothing. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  return c.json(await createCosts(c.req.valid('json'), c.get('auth').userId, c.req.header('x-weave-retry-id')), 200)
})

export const handler = lambdaHandler(app)
