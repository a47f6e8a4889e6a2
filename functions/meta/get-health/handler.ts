import { handle } from 'hono/aws-lambda'
import { createPublicApp } from '#shared/http/create-app'
import { route } from './route.js'

/** `GET /health`: liveness, no credentials, no I/O. */
export const app = createPublicApp().on(route.method, route.path, (c) => c.json({ status: 'ok' }, 200))

export const handler = handle(app)
