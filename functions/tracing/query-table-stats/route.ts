import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { TableQueryStatsReqSchema } from '#shared/schemas/table'
import { TableQueryStatsResSchema } from '#shared/schemas/table-response'

/** `POST /table/query_stats`: the route tracing/query-table-stats serves. */
export const route = declareRoute({
  id: 'tracing/query-table-stats',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/table/query_stats',
  summary: 'Count the rows of a table',
  body: TableQueryStatsReqSchema,
  response: TableQueryStatsResSchema,
  example: { body: { project_id: EXAMPLE_IDS.projectId, digest: EXAMPLE_IDS.tableDigest } },
})
