import { createPublicApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { route } from './route.js'

/** `GET /server_info`: the Weave client versions this server supports; public, no I/O. */
export const app = createPublicApp().on(route.method, route.path, (c) =>
  c.json({ min_required_weave_python_version: '0.0.0', trace_server_version: null }, 200),
)

export const handler = lambdaHandler(app)
