import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { setObjAliases } from '#shared/tracing/object-labels'
import { route } from './route.js'

/** `PUT /objs/{object_id}/aliases`: points aliases at a live version. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  await setObjAliases(body.project_id, c.req.param('object_id'), body.digest, body.aliases)
  return c.json({}, 200)
})

export const handler = lambdaHandler(app)
