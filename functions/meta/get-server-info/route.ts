import { declareRoute } from '#shared/routes/declare'
import { ServerInfoResSchema } from '#shared/schemas/meta'

/** `GET /server_info`: the route meta/get-server-info serves. */
export const route = declareRoute({
  id: 'meta/get-server-info',
  family: 'meta',
  access: 'none',
  auth: false,
  method: 'GET',
  path: '/server_info',
  summary: 'Supported Weave client versions',
  response: ServerInfoResSchema,
  example: { response: { min_required_weave_python_version: '0.0.0', trace_server_version: null } },
})
