import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { TableQueryReqSchema } from '#shared/schemas/table'
import { queryTable } from '#shared/tracing/tables'

/** `POST /table/query`: rows of a table with their digests. */
export const app = createTracingApp().post('/table/query', validate('json', TableQueryReqSchema), async (c) => {
  const res = await queryTable(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = handle(app)
