import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ObjSetAliasesBodySchema } from '#shared/schemas/obj'
import { setObjAliases } from '#shared/tracing/object-labels'

/** `PUT /objs/{object_id}/aliases`: points aliases at a live version. */
export const app = createTracingApp().put(
  '/objs/:object_id/aliases',
  validate('json', ObjSetAliasesBodySchema),
  async (c) => {
    const body = c.req.valid('json')
    await setObjAliases(body.project_id, c.req.param('object_id'), body.digest, body.aliases)
    return c.json({}, 200)
  },
)

export const handler = handle(app)
