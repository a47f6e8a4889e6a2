import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ObjRemoveAliasesBodySchema } from '#shared/schemas/obj'
import { removeObjAliases } from '#shared/tracing/object-labels'

/** `POST /objs/{object_id}/aliases/remove`: removes aliases of an object. */
export const app = createTracingApp().post(
  '/objs/:object_id/aliases/remove',
  validate('json', ObjRemoveAliasesBodySchema),
  async (c) => {
    const body = c.req.valid('json')
    await removeObjAliases(body.project_id, c.req.param('object_id'), body.aliases)
    return c.json({}, 200)
  },
)

export const handler = handle(app)
