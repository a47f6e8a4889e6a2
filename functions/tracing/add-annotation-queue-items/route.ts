import { declareRoute } from '#shared/routes/declare'
import { QueueAddCallsBodySchema } from '#shared/schemas/annotation-queue'
import { QueueAddCallsResSchema } from '#shared/schemas/annotation-queue-response'

/** `POST /annotation_queues/:queue_id/items`: the route tracing/add-annotation-queue-items serves. */
export const route = declareRoute({
  id: 'tracing/add-annotation-queue-items',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/annotation_queues/:queue_id/items',
  summary: 'Add calls to an annotation queue',
  body: QueueAddCallsBodySchema,
  response: QueueAddCallsResSchema,
})
