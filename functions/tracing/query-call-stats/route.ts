import { declareRoute } from '#shared/routes/declare'
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
})
