import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { TableUpdateReqSchema } from '#shared/schemas/table'
import { TableUpdateResSchema } from '#shared/schemas/table-response'

/** `POST /table/update`: the route tracing/update-table serves. */
export const route = declareRoute({
  id: 'tracing/update-table',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/table/update',
  summary: 'Append, pop or insert rows of a table, storing the result as a new table',
  body: TableUpdateReqSchema,
  response: TableUpdateResSchema,
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      base_digest: EXAMPLE_IDS.tableDigest,
      updates: [
        { append: { row: { question: 'What is 3 + 3?', expected: '6' } } },
        { pop: { index: 0 } },
        { insert: { index: 0, row: { question: 'What is 1 + 1?', expected: '2' } } },
      ],
    },
  },
})
