import { createTracingApp } from '#shared/http/create-app'
import { jsonExactResponse } from '#shared/http/json-exact-response'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { readObj } from '#shared/tracing/objects-read'
import { route } from './route.js'

/** `POST /obj/read`: one version by digest, `latest`, `v<N>` or alias. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const obj = await readObj(c.req.valid('json'))
  return jsonExactResponse(c, { obj }, 200)
})

export const handler = lambdaStreamHandler(app)
