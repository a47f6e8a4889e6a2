import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ObjQueryReqSchema } from '#shared/schemas/obj'
import { queryObjs } from '#shared/tracing/objects-read'

/** `POST /objs/query`: live object versions matching a filter. */
export const app = createTracingApp().post('/objs/query', validate('json', ObjQueryReqSchema), async (c) => {
  const objs = await queryObjs(c.req.valid('json'))
  return c.json({ objs }, 200)
})

export const handler = handle(app)
