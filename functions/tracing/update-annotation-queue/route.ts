import { declareRoute } from '#shared/routes/declare'
import { QueueUpdateBodySchema } from '#shared/schemas/annotation-queue'
import { QueueResSchema } from '#shared/schemas/annotation-queue-response'

/** `PUT /annotation_queues/:queue_id`: the route tracing/update-annotation-queue serves. */
export const route = declareRoute({
  id: 'tracing/update-annotation-queue',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'PUT',
  path: '/annotation_queues/:queue_id',
  summary: 'Update an annotation queue',
  body: QueueUpdateBodySchema,
  response: QueueResSchema,
})
