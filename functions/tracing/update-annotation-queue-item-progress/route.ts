import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { ProgressBodySchema } from '#shared/schemas/annotation-queue'
import { ProgressResSchema } from '#shared/schemas/annotation-queue-response'

/** `POST /annotation_queues/:queue_id/items/:item_id/progress`: the route tracing/update-annotation-queue-item-progress serves. */
export const route = declareRoute({
  id: 'tracing/update-annotation-queue-item-progress',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/annotation_queues/:queue_id/items/:item_id/progress',
  summary: "Set the caller's annotation state of a queue item",
  body: ProgressBodySchema,
  response: ProgressResSchema,
  example: {
    params: { queue_id: EXAMPLE_IDS.queueId, item_id: EXAMPLE_IDS.itemId },
    body: { project_id: EXAMPLE_IDS.projectId, annotation_state: 'completed' },
  },
})
