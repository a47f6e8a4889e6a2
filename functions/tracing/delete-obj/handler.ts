import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ObjDeleteReqSchema } from '#shared/schemas/obj'
import { deleteObj } from '#shared/tracing/objects-write'

/** `POST /obj/delete`: soft-deletes versions of an object (all of them when `digests` is null). */
export const app = createTracingApp().post('/obj/delete', validate('json', ObjDeleteReqSchema), async (c) => {
  const res = await deleteObj(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = handle(app)
