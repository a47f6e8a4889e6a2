import { declareRoute } from '#shared/routes/declare'
import { TableCreateReqSchema } from '#shared/schemas/table'
import { TableCreateResSchema } from '#shared/schemas/table-response'

/** `POST /table/create`: the route tracing/create-table serves. */
export const route = declareRoute({
  id: 'tracing/create-table',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/table/create',
  summary: 'Store a table of rows',
  body: TableCreateReqSchema,
  response: TableCreateResSchema,
})
