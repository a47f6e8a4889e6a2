import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { TableCreateFromDigestsReqSchema } from '#shared/schemas/table'
import { TableCreateFromDigestsResSchema } from '#shared/schemas/table-response'

/** `POST /table/create_from_digests`: the route tracing/create-table-from-digests serves. */
export const route = declareRoute({
  id: 'tracing/create-table-from-digests',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/table/create_from_digests',
  summary: 'Store a table of rows already stored in the project, named by their digests',
  body: TableCreateFromDigestsReqSchema,
  response: TableCreateFromDigestsResSchema,
  example: { body: { project_id: EXAMPLE_IDS.projectId, row_digests: [EXAMPLE_IDS.rowDigest] } },
})
