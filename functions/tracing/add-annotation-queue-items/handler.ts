import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { addQueueCalls } from '#shared/tracing/annotation-queues'
import { route } from './route.js'

/** `POST /annotation_queues/{queue_id}/items`: adds calls to a queue, once each. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  const res = await addQueueCalls(c.get('auth').userId, body.project_id, c.req.param('queue_id'), body)
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
