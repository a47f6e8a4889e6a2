import type { Context } from 'hono'
import type { AppEnv } from '#shared/http/app-env'
import { createTracingApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { readFileContent } from '#shared/tracing/files'
import { route } from './route.js'

const [file, files] = route.routes

const validated = validate('json', file.body)

async function content(
  c: Context<AppEnv, string, { in: { json: unknown }; out: { json: { project_id: string; digest: string } } }>,
) {
  const req = c.req.valid('json')
  const bytes = await readFileContent(req.project_id, req.digest)
  return c.body(new Uint8Array(bytes), 200, { 'content-type': 'application/octet-stream' })
}

/** `POST /file/content` (and the hidden alias `/files/content`): the stored bytes. */
export const app = createTracingApp()
  .on(file.method, file.path, validated, content)
  .on(files.method, files.path, validated, content)

export const handler = lambdaStreamHandler(app)
