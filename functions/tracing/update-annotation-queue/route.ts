import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    params: { queue_id: EXAMPLE_IDS.queueId },
    body: {
      project_id: EXAMPLE_IDS.projectId,
      description: 'Check that each summary is faithful and at most one sentence.',
    },
  },
})
