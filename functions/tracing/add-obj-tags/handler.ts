import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { addObjTags } from '#shared/tracing/object-labels'
import { route } from './route.js'

/** `PUT /objs/{object_id}/versions/{digest}/tags`: tags a live version. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  await addObjTags(body.project_id, c.req.param('object_id'), c.req.param('digest'), body.tags)
  return c.json({}, 200)
})

export const handler = lambdaHandler(app)
