import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { ingestCalls } from '#shared/tracing/call-ingest'
import { route } from './route.js'

/** `POST /call/upsert_batch`: start and end parts in order, one result per item; every project is access-checked. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const { batch } = c.req.valid('json')
  const items = batch.map((b) =>
    'start' in b.req ? { mode: 'start' as const, start: b.req.start } : { mode: 'end' as const, end: b.req.end },
  )
  const res = await ingestCalls(c.get('auth'), items, c.req.header('x-weave-retry-id'))
  return c.json({ res }, 200)
})

export const handler = lambdaHandler(app)
