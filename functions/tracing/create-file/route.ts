import { declareFunction } from '#shared/routes/declare'
import { FileCreateResSchema } from '#shared/schemas/table-response'

/** The routes tracing/create-file serves: `POST /file/create`, `POST /files/create`. */
export const route = declareFunction({
  id: 'tracing/create-file',
  family: 'tracing',
  access: 'write',
  auth: true,
  routes: [
    {
      method: 'POST',
      path: '/file/create',
      summary: 'Upload a file (multipart: project_id, file, expected_digest?)',
      response: FileCreateResSchema,
    },
    {
      method: 'POST',
      path: '/files/create',
      summary: 'Alias of /file/create',
      response: FileCreateResSchema,
    },
  ],
})
