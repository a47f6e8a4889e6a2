import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { createFile } from '#shared/tracing/files'
import { route } from './route.js'

const [file, files] = route.routes

/** `POST /file/create` (and the hidden alias `/files/create`): multipart upload, answered with the digest. */
export const app = createTracingApp()
  .on(file.method, file.path, async (c) => c.json(await createFile(c), 200))
  .on(files.method, files.path, async (c) => c.json(await createFile(c), 200))

export const handler = lambdaHandler(app)
