import { defaultIsContentTypeBinary } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { queryQueues } from '#shared/tracing/annotation-queues'
import { route } from './route.js'

/** `POST /annotation_queues/query`: live queues as JSON Lines. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const queues = await queryQueues(c.req.valid('json'))
  const body = queues.map((q) => `${JSON.stringify(q)}\n`).join('')
  return c.body(body, 200, { 'content-type': 'application/jsonl' })
})

// JSON Lines is text: without this the adapter would base64-encode it as binary.
export const handler = lambdaHandler(app, {
  isContentTypeBinary: (type) => !type.startsWith('application/jsonl') && defaultIsContentTypeBinary(type),
})
