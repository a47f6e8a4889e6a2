import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { assertScorerRefsOpen, updateQueueFields } from '#shared/tracing/annotation-queues'
import { route } from './route.js'

/** `PUT /annotation_queues/{queue_id}`: changes name, description or scorer refs of a live queue. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  assertScorerRefsOpen(c.get('auth'), body.scorer_refs)
  const queue = await updateQueueFields(body.project_id, c.req.param('queue_id'), body)
  return c.json({ queue }, 200)
})

export const handler = lambdaHandler(app)
