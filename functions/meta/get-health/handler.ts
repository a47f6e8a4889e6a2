import { handle } from 'hono/aws-lambda'
import { createPublicApp } from '#shared/http/create-app'

/** `GET /health`: liveness, no credentials, no I/O. */
export const app = createPublicApp().get('/health', (c) => c.json({ status: 'ok' }, 200))

export const handler = handle(app)
