import { FUNCTIONS } from '#functions/manifest'
import { createPublicApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { buildOpenApiDocument } from '#shared/http/openapi'
import { route } from './route.js'

// Built once per container from the route declarations and their zod schemas.
let document: Record<string, unknown> | undefined

/** `GET /openapi.json`: the OpenAPI 3.1 document of every route Loom serves. */
export const app = createPublicApp().on(route.method, route.path, (c) => {
  document ??= buildOpenApiDocument(FUNCTIONS, '0.1.0')
  return c.json(document, 200)
})

export const handler = lambdaHandler(app)
