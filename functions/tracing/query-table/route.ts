import { declareRoute } from '#shared/routes/declare'
import { TableQueryResSchema } from '#shared/schemas/obj-response'
import { TableQueryReqSchema } from '#shared/schemas/table'

/** `POST /table/query`: the route tracing/query-table serves. */
export const route = declareRoute({
  id: 'tracing/query-table',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/table/query',
  summary: 'Read rows of a table',
  body: TableQueryReqSchema,
  response: TableQueryResSchema,
})
