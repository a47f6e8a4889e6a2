import { declareRoute } from '#shared/routes/declare'
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
})
