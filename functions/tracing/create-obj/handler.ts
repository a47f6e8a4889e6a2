import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { createObj } from '#shared/tracing/objects-write'
import { route } from './route.js'

/** `POST /obj/create`: publishes an object version (deduplicated by digest) and returns its digest. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  // The raw text (cached by Hono) keeps numbers as sent, which the digest needs.
  const res = await createObj(c.get('auth'), c.req.valid('json'), await c.req.text())
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
