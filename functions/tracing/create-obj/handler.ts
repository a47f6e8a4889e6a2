import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ObjCreateReqSchema } from '#shared/schemas/obj'
import { createObj } from '#shared/tracing/objects-write'

/** `POST /obj/create`: publishes an object version (deduplicated by digest) and returns its digest. */
export const app = createTracingApp().post('/obj/create', validate('json', ObjCreateReqSchema), async (c) => {
  const res = await createObj(c.get('auth'), c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = handle(app)
