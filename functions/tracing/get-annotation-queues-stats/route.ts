import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { QueuesStatsReqSchema } from '#shared/schemas/annotation-queue'
import { QueuesStatsResSchema } from '#shared/schemas/annotation-queue-response'

/** `POST /annotation_queues/stats`: the route tracing/get-annotation-queues-stats serves. */
export const route = declareRoute({
  id: 'tracing/get-annotation-queues-stats',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/annotation_queues/stats',
  summary: 'Item counts per annotation queue',
  body: QueuesStatsReqSchema,
  response: QueuesStatsResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, queue_ids: [EXAMPLE_IDS.queueId] },
    response: { stats: [{ queue_id: EXAMPLE_IDS.queueId, total_items: 3, completed_items: 1 }] },
  },
})
