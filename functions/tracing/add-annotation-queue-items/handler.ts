import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { QueueAddCallsBodySchema } from '#shared/schemas/annotation-queue'
import { addQueueCalls } from '#shared/tracing/annotation-queues'

/** `POST /annotation_queues/{queue_id}/items`: adds calls to a queue, once each. */
export const app = createTracingApp().post(
  '/annotation_queues/:queue_id/items',
  validate('json', QueueAddCallsBodySchema),
  async (c) => {
    const body = c.req.valid('json')
    const res = await addQueueCalls(c.get('auth').userId, body.project_id, c.req.param('queue_id'), body)
    return c.json(res, 200)
  },
)

export const handler = handle(app)
