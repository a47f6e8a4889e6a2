import { handle } from 'hono/aws-lambda'
import { FUNCTIONS } from '#functions/manifest'
import { createPublicApp } from '#shared/http/create-app'
import { buildOpenApiDocument } from '#shared/http/openapi'
import { ROUTE_DOCS } from '#shared/routes/docs'

// Built once per container from the manifest and the handlers' own zod schemas.
let document: Record<string, unknown> | undefined

/** `GET /openapi.json`: the OpenAPI 3.1 document of every route Loom serves. */
export const app = createPublicApp().get('/openapi.json', (c) => {
  document ??= buildOpenApiDocument(
    FUNCTIONS.flatMap((fn) =>
      fn.routes.map((r) => ({ ...r, family: fn.family, auth: fn.auth, doc: ROUTE_DOCS[`${r.method} ${r.path}`] })),
    ),
    '0.1.0',
  )
  return c.json(document, 200)
})

export const handler = handle(app)
