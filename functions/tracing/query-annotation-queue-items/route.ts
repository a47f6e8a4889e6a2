import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { QueueItemsQueryBodySchema } from '#shared/schemas/annotation-queue'
import { QueueItemsQueryResSchema } from '#shared/schemas/annotation-queue-response'

/** `POST /annotation_queues/:queue_id/items/query`: the route tracing/query-annotation-queue-items serves. */
export const route = declareRoute({
  id: 'tracing/query-annotation-queue-items',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/annotation_queues/:queue_id/items/query',
  summary: 'Query the items of an annotation queue',
  body: QueueItemsQueryBodySchema,
  response: QueueItemsQueryResSchema,
  example: {
    params: { queue_id: EXAMPLE_IDS.queueId },
    body: {
      project_id: EXAMPLE_IDS.projectId,
      filter: { annotation_states: ['unstarted', 'in_progress'] },
      sort_by: [{ field: 'created_at', direction: 'asc' }],
      limit: 50,
      include_position: true,
    },
  },
})
