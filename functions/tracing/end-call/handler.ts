import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { ingestCalls } from '#shared/tracing/call-ingest'
import { route } from './route.js'

/** `POST /call/end`: stores a call's end part (it may arrive before the start). */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const { end } = c.req.valid('json')
  await ingestCalls(c.get('auth'), [{ mode: 'end', end }])
  return c.json({}, 200)
})

export const handler = lambdaHandler(app)
