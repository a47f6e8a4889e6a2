import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { QueueCreateReqSchema } from '#shared/schemas/annotation-queue'
import { createQueue } from '#shared/tracing/annotation-queues'

/** `POST /annotation_queues`: creates a queue owned by the authenticated user. */
export const app = createTracingApp().post('/annotation_queues', validate('json', QueueCreateReqSchema), async (c) => {
  const res = await createQueue(c.get('auth').userId, c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = handle(app)
