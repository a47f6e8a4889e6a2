import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ObjTagsBodySchema } from '#shared/schemas/obj'
import { addObjTags } from '#shared/tracing/object-labels'

/** `PUT /objs/{object_id}/versions/{digest}/tags`: tags a live version. */
export const app = createTracingApp().put(
  '/objs/:object_id/versions/:digest/tags',
  validate('json', ObjTagsBodySchema),
  async (c) => {
    const body = c.req.valid('json')
    await addObjTags(body.project_id, c.req.param('object_id'), c.req.param('digest'), body.tags)
    return c.json({}, 200)
  },
)

export const handler = handle(app)
