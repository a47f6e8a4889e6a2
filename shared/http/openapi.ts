import * as z from 'zod/mini'
import type { FunctionDeclaration, HeaderParameter, RouteDeclaration } from '#shared/routes/declare'

const SECURITY: Record<string, Record<string, string[]>[]> = {
  inference: [{ bearer: [] }],
  training: [{ bearer: [] }],
  tracing: [{ basic: [] }, { bearer: [] }],
}

const ISSUES = {
  type: 'array',
  items: { type: 'object', properties: { loc: {}, msg: { type: 'string' }, type: { type: 'string' } } },
}

// Each family's error body (STYLE §4, the contracts), as components the responses refer to.
const ERROR_SCHEMAS: Record<string, Record<string, unknown>> = {
  InferenceError: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string' },
          param: { type: ['string', 'null'] },
          code: { type: 'integer' },
        },
      },
    },
  },
  TracingError: {
    type: 'object',
    description: '`reason` for most errors (with extra keys such as `deleted_at`); request validation: `detail`.',
    properties: { reason: { type: 'string' }, detail: ISSUES },
  },
  TrainingError: {
    type: 'object',
    required: ['detail'],
    properties: { detail: { oneOf: [{ type: 'string' }, ISSUES] } },
  },
}

const FAMILY_ERROR: Record<string, string> = {
  inference: 'InferenceError',
  tracing: 'TracingError',
  training: 'TrainingError',
}

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
}

// The errors every route of a family may answer, in the family's shape: request errors, an unexpected failure (500),
// for authenticated routes the key's refusal and rate limits (429), and an unavailable store or engine (503), 429 and
// 503 with `Retry-After`; then the statuses the route itself declares (`errors`), described as it describes them.
function errorResponses(family: string, auth: boolean, route: RouteDeclaration): Record<string, unknown> {
  const name = FAMILY_ERROR[family]
  if (name === undefined) return {}
  const content = { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } }
  const common: Record<string, Record<string, unknown>> = {
    '4XX': { description: 'Invalid request (validation, not found, conflict, too large)', content },
    ...(auth
      ? {
          '401': { description: 'Missing, unknown or revoked key', content },
          '403': { description: 'A project of an entity the key does not belong to', content },
          '429': { description: 'Over a key or model rate or concurrency limit', headers: RETRY_AFTER, content },
        }
      : {}),
    '500': { description: 'Unexpected error: a generic message, the details in the log only', content },
    '503': { description: 'Storage or model server unavailable after retries', headers: RETRY_AFTER, content },
  }
  for (const [status, description] of Object.entries(route.errors ?? {})) {
    common[status] = { ...common[status], description, content }
  }
  return common
}

function jsonSchema(schema: z.core.$ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >
  return rest
}

// An OpenAPI 3 `example` member, present only where the declaration states one.
function exampleOf(value: unknown): { example?: unknown } {
  return value === undefined ? {} : { example: value }
}

function queryParameters(schema: z.core.$ZodType, examples: Record<string, string> = {}): unknown[] {
  const json = jsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] }
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
    ...exampleOf(examples[name]),
  }))
}

function headerParameters(headers: readonly HeaderParameter[] = []): unknown[] {
  return headers.map(({ name, description, required, schema }) => ({
    name,
    in: 'header',
    description,
    required: required ?? false,
    schema: schema ? jsonSchema(schema) : { type: 'string' },
  }))
}

// The 200 in the declared media type (and the alternative the request may choose), or for a route that only
// redirects its 302.
function successResponse(route: RouteDeclaration, example: unknown): Record<string, unknown> {
  if (route.redirect !== undefined) {
    return {
      '302': {
        description: `Redirect to ${route.redirect}`,
        // Deployed, a stage's base path comes first (`/prod/console/`); not an `example`, which only declarations give.
        headers: {
          Location: { description: `${route.redirect} under the API's base path`, schema: { type: 'string' } },
        },
      },
    }
  }
  const primary = route.responseMediaType ?? 'application/json'
  const content: Record<string, unknown> = route.responseMediaType
    ? { [primary]: {} }
    : { [primary]: { schema: route.response ? jsonSchema(route.response) : {}, ...exampleOf(example) } }
  const alternative = route.alternativeResponse
  if (alternative === undefined) return { '200': { description: 'Success', content } }
  content[alternative.mediaType] = alternative.schema ? { schema: jsonSchema(alternative.schema) } : {}
  const description = `Success: \`${primary}\`, or \`${alternative.mediaType}\` ${alternative.description}`
  return { '200': { description, content } }
}

// The JSON body with its schema and example, and any other media type it may be sent in without one.
function requestBody(route: RouteDeclaration, body: z.core.$ZodType, example: unknown): Record<string, unknown> {
  const types = route.bodyMediaTypes ?? ['application/json']
  const json = { schema: jsonSchema(body), ...exampleOf(example) }
  return { required: true, content: Object.fromEntries(types.map((t) => [t, t === 'application/json' ? json : {}])) }
}

/** Builds an OpenAPI 3.1 document from the route declarations (`functions/manifest.ts`) and their zod schemas. */
export function buildOpenApiDocument(
  functions: readonly FunctionDeclaration[],
  version: string,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const fn of functions) {
    for (const route of fn.routes) {
      const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}')
      const example = route.example ?? {}
      const pathParams = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map(([, name = '']) => ({
        name,
        in: 'path',
        required: true,
        schema: { type: 'string' },
        ...exampleOf(example.params?.[name]),
      }))
      const operation: Record<string, unknown> = {
        summary: route.summary,
        tags: [fn.family],
        parameters: [
          ...pathParams,
          ...(route.query ? queryParameters(route.query, example.query) : []),
          ...headerParameters(route.headers),
        ],
        responses: { ...successResponse(route, example.response), ...errorResponses(fn.family, fn.auth, route) },
      }
      if (route.body) operation.requestBody = requestBody(route, route.body, example.body)
      if (fn.auth) operation.security = SECURITY[fn.family] ?? []
      paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation }
    }
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
      schemas: ERROR_SCHEMAS,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        basic: { type: 'http', scheme: 'basic', description: 'username `api`, password = API key (Weave SDKs)' },
      },
    },
  }
}
