import { declareRoute } from '#shared/routes/declare'
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
})
