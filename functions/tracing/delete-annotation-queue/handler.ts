import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { deleteQueue } from '#shared/tracing/annotation-queues'
import { route } from './route.js'

/** `DELETE /annotation_queues/{queue_id}?project_id=`: soft-deletes a queue. */
export const app = createTracingApp().on(route.method, route.path, validate('query', route.query), async (c) => {
  const queue = await deleteQueue(c.req.valid('query').project_id, c.req.param('queue_id'))
  return c.json({ queue }, 200)
})

export const handler = lambdaHandler(app)
