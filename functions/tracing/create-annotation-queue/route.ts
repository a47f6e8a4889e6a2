import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      name: 'Summary review',
      description: 'Check that each summary is faithful to its input.',
      scorer_refs: [`weave:///${EXAMPLE_IDS.projectId}/object/faithfulness:${EXAMPLE_IDS.objectDigest}`],
    },
    response: { id: EXAMPLE_IDS.queueId },
  },
})
