import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { CallsQueryReqSchema } from '#shared/schemas/call'

/** `POST /calls/stream_query`: the route tracing/stream-query-calls serves. */
export const route = declareRoute({
  id: 'tracing/stream-query-calls',
  family: 'tracing',
  access: 'read',
  stream: true,
  longRunning: true,
  auth: true,
  method: 'POST',
  path: '/calls/stream_query',
  summary: 'Query calls (JSON Lines)',
  body: CallsQueryReqSchema,
  responseMediaType: 'application/jsonl',
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      filter: { trace_roots_only: true },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
      limit: 100,
    },
  },
})
