import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { TableCreateReqSchema } from '#shared/schemas/table'
import { TableCreateResSchema } from '#shared/schemas/table-response'

/** `POST /table/create`: the route tracing/create-table serves. */
export const route = declareRoute({
  id: 'tracing/create-table',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/table/create',
  summary: 'Store a table of rows',
  body: TableCreateReqSchema,
  response: TableCreateResSchema,
  example: {
    body: {
      table: {
        project_id: EXAMPLE_IDS.projectId,
        rows: [
          { question: 'What is 2 + 2?', expected: '4' },
          { question: 'What is the capital of France?', expected: 'Paris' },
        ],
      },
    },
  },
})
