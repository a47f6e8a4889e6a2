import { declareFunction } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { FileContentReqSchema } from '#shared/schemas/table'

/** The routes tracing/read-file-content serves: `POST /file/content`, `POST /files/content`. */
export const route = declareFunction({
  id: 'tracing/read-file-content',
  family: 'tracing',
  access: 'read',
  stream: true,
  auth: true,
  routes: [
    {
      method: 'POST',
      path: '/file/content',
      summary: 'Download a file',
      body: FileContentReqSchema,
      responseMediaType: 'application/octet-stream',
      example: { body: { project_id: EXAMPLE_IDS.projectId, digest: EXAMPLE_IDS.fileDigest } },
    },
    {
      method: 'POST',
      path: '/files/content',
      summary: 'Alias of /file/content',
      body: FileContentReqSchema,
      responseMediaType: 'application/octet-stream',
      example: { body: { project_id: EXAMPLE_IDS.projectId, digest: EXAMPLE_IDS.fileDigest } },
    },
  ],
})
