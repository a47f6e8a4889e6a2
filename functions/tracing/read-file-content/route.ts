import { declareFunction } from '#shared/routes/declare'
import { FileContentReqSchema } from '#shared/schemas/table'

/** The routes tracing/read-file-content serves: `POST /file/content`, `POST /files/content`. */
export const route = declareFunction({
  id: 'tracing/read-file-content',
  family: 'tracing',
  access: 'read',
  auth: true,
  routes: [
    {
      method: 'POST',
      path: '/file/content',
      summary: 'Download a file',
      body: FileContentReqSchema,
      responseMediaType: 'application/octet-stream',
    },
    {
      method: 'POST',
      path: '/files/content',
      summary: 'Alias of /file/content',
      body: FileContentReqSchema,
      responseMediaType: 'application/octet-stream',
    },
  ],
})
