import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { TableQueryReqSchema } from '#shared/schemas/table'
import { TableQueryResSchema } from '#shared/schemas/table-response'

/** `POST /table/query`: the route tracing/query-table serves. */
export const route = declareRoute({
  id: 'tracing/query-table',
  family: 'tracing',
  access: 'read',
  stream: true,
  auth: true,
  method: 'POST',
  path: '/table/query',
  summary: 'Read rows of a table',
  body: TableQueryReqSchema,
  response: TableQueryResSchema,
  example: { body: { project_id: EXAMPLE_IDS.projectId, digest: EXAMPLE_IDS.tableDigest, limit: 100, offset: 0 } },
})
