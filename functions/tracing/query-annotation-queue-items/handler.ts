import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { queryQueueItems } from '#shared/tracing/annotation-queue-items'
import { route } from './route.js'

/** `POST /annotation_queues/{queue_id}/items/query`: a queue's items with their annotation states. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  const items = await queryQueueItems(body.project_id, c.req.param('queue_id'), body)
  return c.json({ items }, 200)
})

export const handler = lambdaHandler(app)
