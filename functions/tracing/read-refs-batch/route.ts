import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { RefsReadBatchReqSchema } from '#shared/schemas/ref'
import { RefsReadBatchResSchema } from '#shared/schemas/ref-response'

const objectRef = `weave:///${EXAMPLE_IDS.projectId}/object/${EXAMPLE_IDS.objectId}:${EXAMPLE_IDS.objectDigest}`

/** `POST /refs/read_batch`: the route tracing/read-refs-batch serves. */
export const route = declareRoute({
  id: 'tracing/read-refs-batch',
  family: 'tracing',
  access: 'read',
  stream: true,
  auth: true,
  method: 'POST',
  path: '/refs/read_batch',
  summary: 'Read the values of object refs',
  body: RefsReadBatchReqSchema,
  response: RefsReadBatchResSchema,
  example: { body: { refs: [objectRef] } },
})
