import { declareRoute } from '#shared/routes/declare'
import { QueueCreateReqSchema } from '#shared/schemas/annotation-queue'
import { QueueCreateResSchema } from '#shared/schemas/annotation-queue-response'

/** `POST /annotation_queues`: the route tracing/create-annotation-queue serves. */
export const route = declareRoute({
  id: 'tracing/create-annotation-queue',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/annotation_queues',
  summary: 'Create an annotation queue',
  body: QueueCreateReqSchema,
  response: QueueCreateResSchema,
})
