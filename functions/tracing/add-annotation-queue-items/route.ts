import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    params: { queue_id: EXAMPLE_IDS.queueId },
    body: {
      project_id: EXAMPLE_IDS.projectId,
      call_ids: [EXAMPLE_IDS.callId],
      display_fields: ['inputs.text', 'output'],
    },
    response: { added_count: 1, duplicates: 0 },
  },
})
