import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { removeObjAliases } from '#shared/tracing/object-labels'
import { route } from './route.js'

/** `POST /objs/{object_id}/aliases/remove`: removes aliases of an object. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  await removeObjAliases(body.project_id, c.req.param('object_id'), body.aliases)
  return c.json({}, 200)
})

export const handler = lambdaHandler(app)
