import { createPublicApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { route } from './route.js'

/** `GET /health`: liveness, no credentials, no I/O. */
export const app = createPublicApp().on(route.method, route.path, (c) => c.json({ status: 'ok' }, 200))

export const handler = lambdaHandler(app)
