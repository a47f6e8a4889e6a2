import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallsQueryStatsReqSchema } from '#shared/schemas/call'
import { CallsQueryStatsResSchema } from '#shared/schemas/call-response'

/** `POST /calls/query_stats`: the route tracing/query-call-stats serves. */
export const route = declareRoute({
  id: 'tracing/query-call-stats',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/calls/query_stats',
  summary: 'Count calls',
  body: CallsQueryStatsReqSchema,
  response: CallsQueryStatsResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, filter: { trace_roots_only: true, op_names: [EXAMPLE_IDS.opName] } },
    response: { count: 12, has_more: false, total_storage_size_bytes: null },
  },
})
