import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { createFile } from '#shared/tracing/files'

/** `POST /file/create` (and the hidden alias `/files/create`): multipart upload, answered with the digest. */
export const app = createTracingApp()
  .post('/file/create', async (c) => c.json(await createFile(c), 200))
  .post('/files/create', async (c) => c.json(await createFile(c), 200))

export const handler = handle(app)
