import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ObjCreateReqSchema } from '#shared/schemas/obj'
import { createObj } from '#shared/tracing/objects-write'

/** `POST /obj/create`: publishes an object version (deduplicated by digest) and returns its digest. */
export const app = createTracingApp().post('/obj/create', validate('json', ObjCreateReqSchema), async (c) => {
  // The raw text (cached by Hono) keeps numbers as sent, which the digest needs.
  const res = await createObj(c.get('auth'), c.req.valid('json'), await c.req.text())
  return c.json(res, 200)
})

export const handler = handle(app)
