import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { deleteObj } from '#shared/tracing/objects-write'
import { route } from './route.js'

/** `POST /obj/delete`: soft-deletes versions of an object (all of them when `digests` is null). */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const res = await deleteObj(c.req.valid('json'))
  return c.json(res, 200)
})

export const handler = lambdaHandler(app)
