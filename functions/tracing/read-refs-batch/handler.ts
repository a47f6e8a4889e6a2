import { createTracingApp } from '#shared/http/create-app'
import { jsonExactResponse } from '#shared/http/json-exact-response'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { readRefsBatch } from '#shared/tracing/refs-read'
import { route } from './route.js'

/** `POST /refs/read_batch`: the values object and op refs name, walked along their extra paths, in order. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  // The refs name their projects, out of reach of the validator's `project_id` check: checked per ref.
  const res = await readRefsBatch(c.get('auth'), c.req.valid('json'))
  return jsonExactResponse(c, res, 200)
})

export const handler = lambdaStreamHandler(app)
