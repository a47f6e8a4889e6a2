import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { QueueItemsQueryBodySchema } from '#shared/schemas/annotation-queue'
import { queryQueueItems } from '#shared/tracing/annotation-queue-items'

/** `POST /annotation_queues/{queue_id}/items/query`: a queue's items with their annotation states. */
export const app = createTracingApp().post(
  '/annotation_queues/:queue_id/items/query',
  validate('json', QueueItemsQueryBodySchema),
  async (c) => {
    const body = c.req.valid('json')
    const items = await queryQueueItems(body.project_id, c.req.param('queue_id'), body)
    return c.json({ items }, 200)
  },
)

export const handler = handle(app)
