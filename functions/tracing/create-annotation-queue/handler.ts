import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { QueueCreateReqSchema } from '#shared/schemas/annotation-queue'
import { createQueue } from '#shared/tracing/annotation-queues'

/**
 * `POST /annotation_queues`: creates a queue owned by the authenticated user; attempts sharing one `X-Weave-Retry-Id`
 * create one queue.
 */
export const app = createTracingApp().post('/annotation_queues', validate('json', QueueCreateReqSchema), async (c) => {
  const res = await createQueue(c.get('auth').userId, c.req.valid('json'), c.req.header('x-weave-retry-id'))
  return c.json(res, 200)
})

export const handler = handle(app)
