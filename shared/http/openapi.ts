import * as z from 'zod/mini'

/** What the OpenAPI document says about one route, beyond its method and path. */
export type RouteDoc = {
  summary: string
  /** JSON request body schema. */
  body?: z.core.$ZodType
  /** Query-string schema (an object schema). */
  query?: z.core.$ZodType
  /** JSON response schema; omitted where the response is free-form or streamed. */
  response?: z.core.$ZodType
  /** Media type of a non-JSON response (`text/event-stream`, `application/jsonl`, `application/octet-stream`). */
  responseMediaType?: string
}

/** A route as the manifest lists it, with its family and whether it needs credentials. */
export type DocumentedRoute = { method: string; path: string; family: string; auth: boolean; doc: RouteDoc | undefined }

const SECURITY: Record<string, Record<string, string[]>[]> = {
  inference: [{ bearer: [] }],
  training: [{ bearer: [] }],
  tracing: [{ basic: [] }, { bearer: [] }],
}

function jsonSchema(schema: z.core.$ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >
  return rest
}

function queryParameters(schema: z.core.$ZodType): unknown[] {
  const json = jsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] }
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
  }))
}

/** Builds an OpenAPI 3.1 document from the routes and the zod schemas that validate them. */
export function buildOpenApiDocument(routes: readonly DocumentedRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}')
    const pathParams = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }))
    const doc = route.doc
    const operation: Record<string, unknown> = {
      summary: doc?.summary ?? `${route.method} ${route.path}`,
      tags: [route.family],
      parameters: [...pathParams, ...(doc?.query ? queryParameters(doc.query) : [])],
      responses: {
        '200': {
          description: 'Success',
          content: doc?.responseMediaType
            ? { [doc.responseMediaType]: {} }
            : { 'application/json': { schema: doc?.response ? jsonSchema(doc.response) : {} } },
        },
      },
    }
    if (doc?.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(doc.body) } } }
    }
    if (route.auth) operation.security = SECURITY[route.family] ?? []
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Loom',
      version,
      description: 'Inference (vLLM/OpenAI-compatible), training log and Weave-compatible tracing.',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        basic: { type: 'http', scheme: 'basic', description: 'username `api`, password = API key (Weave SDKs)' },
      },
    },
  }
}
