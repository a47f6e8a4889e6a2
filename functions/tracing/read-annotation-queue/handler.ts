import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { readQueue } from '#shared/tracing/annotation-queues'
import { route } from './route.js'

/** `GET /annotation_queues/{queue_id}?project_id=`: one live queue. */
export const app = createTracingApp().on(route.method, route.path, validate('query', route.query), async (c) => {
  const queue = await readQueue(c.req.valid('query').project_id, c.req.param('queue_id'))
  return c.json({ queue }, 200)
})

export const handler = lambdaHandler(app)
