import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { assertScorerRefsOpen, createQueue } from '#shared/tracing/annotation-queues'
import { route } from './route.js'

/**
 * `POST /annotation_queues`: creates a queue owned by the authenticated user; attempts sharing one `X-Weave-Retry-Id`
 * create one queue.
 */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  assertScorerRefsOpen(c.get('auth'), body.scorer_refs)
  const res = await createQueue(c.get('auth').userId, body, c.req.header('x-weave-retry-id'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
