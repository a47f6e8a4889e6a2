import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { ingestCalls } from '#shared/tracing/call-ingest'
import { route } from './route.js'

/**
 * `POST /call/start`: stores a call's start part; generates missing `id`/`trace_id` (UUIDv7), the same ones again for
 * a retry carrying the same `X-Weave-Retry-Id`.
 */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const { start } = c.req.valid('json')
  const [res] = await ingestCalls(c.get('auth'), [{ mode: 'start', start }], c.req.header('x-weave-retry-id'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
