import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { QueueProjectQuerySchema } from '#shared/schemas/annotation-queue'
import { QueueResSchema } from '#shared/schemas/annotation-queue-response'

/** `GET /annotation_queues/:queue_id`: the route tracing/read-annotation-queue serves. */
export const route = declareRoute({
  id: 'tracing/read-annotation-queue',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'GET',
  path: '/annotation_queues/:queue_id',
  summary: 'Read an annotation queue',
  query: QueueProjectQuerySchema,
  response: QueueResSchema,
  example: { params: { queue_id: EXAMPLE_IDS.queueId }, query: { project_id: EXAMPLE_IDS.projectId } },
})
