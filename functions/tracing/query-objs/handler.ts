import { createTracingApp } from '#shared/http/create-app'
import { jsonExactResponse } from '#shared/http/json-exact-response'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { queryObjs } from '#shared/tracing/objects-read'
import { route } from './route.js'

/** `POST /objs/query`: live object versions matching a filter. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const objs = await queryObjs(c.req.valid('json'))
  return jsonExactResponse(c, { objs }, 200)
})

export const handler = lambdaStreamHandler(app)
