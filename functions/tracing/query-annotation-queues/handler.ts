import { defaultIsContentTypeBinary, handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { QueuesQueryReqSchema } from '#shared/schemas/annotation-queue'
import { queryQueues } from '#shared/tracing/annotation-queues'

/** `POST /annotation_queues/query`: live queues as JSON Lines. */
export const app = createTracingApp().post(
  '/annotation_queues/query',
  validate('json', QueuesQueryReqSchema),
  async (c) => {
    const queues = await queryQueues(c.req.valid('json'))
    const body = queues.map((q) => `${JSON.stringify(q)}\n`).join('')
    return c.body(body, 200, { 'content-type': 'application/jsonl' })
  },
)

// JSON Lines is text: without this the adapter would base64-encode it as binary.
export const handler = handle(app, {
  isContentTypeBinary: (type) => !type.startsWith('application/jsonl') && defaultIsContentTypeBinary(type),
})
