import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { QueueProjectQuerySchema } from '#shared/schemas/annotation-queue'
import { QueueResSchema } from '#shared/schemas/annotation-queue-response'

/** `DELETE /annotation_queues/:queue_id`: the route tracing/delete-annotation-queue serves. */
export const route = declareRoute({
  id: 'tracing/delete-annotation-queue',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'DELETE',
  path: '/annotation_queues/:queue_id',
  summary: 'Delete an annotation queue',
  query: QueueProjectQuerySchema,
  response: QueueResSchema,
  example: { params: { queue_id: EXAMPLE_IDS.queueId }, query: { project_id: EXAMPLE_IDS.projectId } },
})
