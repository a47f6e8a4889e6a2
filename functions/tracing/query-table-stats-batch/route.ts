import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { TableQueryStatsBatchReqSchema } from '#shared/schemas/table'
import { TableQueryStatsBatchResSchema } from '#shared/schemas/table-response'

/** `POST /table/query_stats_batch`: the route tracing/query-table-stats-batch serves. */
export const route = declareRoute({
  id: 'tracing/query-table-stats-batch',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/table/query_stats_batch',
  summary: 'Row counts and storage sizes of several tables',
  body: TableQueryStatsBatchReqSchema,
  response: TableQueryStatsBatchResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, digests: [EXAMPLE_IDS.tableDigest], include_storage_size: true },
  },
})
