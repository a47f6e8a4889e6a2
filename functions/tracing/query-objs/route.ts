import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { ObjQueryReqSchema } from '#shared/schemas/obj'
import { ObjQueryResSchema } from '#shared/schemas/obj-response'

/** `POST /objs/query`: the route tracing/query-objs serves. */
export const route = declareRoute({
  id: 'tracing/query-objs',
  family: 'tracing',
  access: 'read',
  stream: true,
  auth: true,
  method: 'POST',
  path: '/objs/query',
  summary: 'Query object versions',
  body: ObjQueryReqSchema,
  response: ObjQueryResSchema,
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      filter: { base_object_classes: ['Prompt'], latest_only: true },
      sort_by: [{ field: 'created_at', direction: 'desc' }],
      limit: 20,
      metadata_only: true,
    },
  },
})
