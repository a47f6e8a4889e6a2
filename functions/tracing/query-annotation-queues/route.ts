import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { QueuesQueryReqSchema } from '#shared/schemas/annotation-queue'

/** `POST /annotation_queues/query`: the route tracing/query-annotation-queues serves. */
export const route = declareRoute({
  id: 'tracing/query-annotation-queues',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/annotation_queues/query',
  summary: 'Query annotation queues',
  body: QueuesQueryReqSchema,
  responseMediaType: 'application/jsonl',
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, sort_by: [{ field: 'created_at', direction: 'desc' }], limit: 20 },
  },
})
