import type * as z from 'zod/mini'

/** An HTTP method a route may use. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** A route family: its app factory, error shape and credentials (`shared/http/create-app.ts`). */
export type Family = 'meta' | 'inference' | 'training' | 'tracing'

type Schema = z.core.$ZodType

/**
 * What a client sends on one route, and optionally what a 200 answers, as OpenAPI shows it; each part parses with the
 * route's schema (`test/functions/route-examples.test.ts`). Placeholder ids (`my-entity/my-project`), no secrets.
 */
export type RouteExample = {
  /** A value for every path parameter (`{ queue_id: '…' }` for `/annotation_queues/:queue_id`). */
  params?: Record<string, string>
  /** Query-string values as sent (strings), for a route with a `query` schema. */
  query?: Record<string, string>
  /** The JSON request body, for a route with a `body` schema. */
  body?: unknown
  /** A JSON 200 answer, for a route with a `response` schema, where one is short to state. */
  response?: unknown
}

/** A request header a route reads, as OpenAPI lists it (credentials and `Content-Type` are documented elsewhere). */
export type HeaderParameter = {
  name: string
  description: string
  /** Whether every request must send it. @default false */
  required?: boolean
  /** A string schema for its value; any text when omitted. */
  schema?: Schema
}

type Digit = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9

/** An error status OpenAPI lists (`404`, `501`), or a range (`5XX`). */
export type ErrorStatus = `${4 | 5}${Digit}${Digit}` | '4XX' | '5XX'

/**
 * Another media type a 200 may come in, chosen by the request (an SSE stream when the body sets `stream`): `schema`
 * describes one item (one event's `data`), as OpenAI's OpenAPI document describes its streams.
 */
export type AlternativeResponse = {
  /** `text/event-stream`, `application/jsonl`. */
  mediaType: string
  /** When the route answers in this type and how it is framed. */
  description: string
  /** The schema of one item of the stream. */
  schema?: Schema
}

/** One route: how a client calls it and what it answers, as the handler, OpenAPI and the tests read it. */
export type RouteDeclaration = {
  method: HttpMethod
  /** The full public path, Hono style (`/objs/:object_id/aliases`); path parameters are strings. */
  path: string
  /** The OpenAPI summary. */
  summary: string
  /** JSON request body schema (the one the handler validates with, where it validates one). */
  body?: Schema
  /**
   * The media types the body may be sent in, where JSON is not the only one; `body` and the example describe the
   * `application/json` form, the others (binary encodings of the same message) are listed without a schema.
   * @default ['application/json']
   */
  bodyMediaTypes?: readonly string[]
  /** Request headers the route reads besides credentials and `Content-Type` (`Idempotency-Key`). */
  headers?: readonly HeaderParameter[]
  /** Query-string schema (an object schema). */
  query?: Schema
  /** JSON response schema of a 200; omitted where the response is free-form or not JSON. */
  response?: Schema
  /** Media type of a non-JSON response (`text/event-stream`, `application/jsonl`, `application/octet-stream`). */
  responseMediaType?: string
  /** A second media type of the 200 besides `response`'s JSON (a completion's stream). */
  alternativeResponse?: AlternativeResponse
  /**
   * Error statuses the route answers beyond its family's common ones (`4XX`, 500, 503 and, with credentials, 401, 403,
   * 429), each with what answers it; OpenAPI shows them in the family's error shape.
   */
  errors?: Readonly<Partial<Record<ErrorStatus, string>>>
  /** For a route that only redirects: the `Location` of its 302, which replaces the 200 (no `response` then). */
  redirect?: string
  /** A request a client would send (and optionally its answer); required where the route has a body or query. */
  example?: RouteExample
}

/** What deploying one Lambda needs to know: its folder, family, table access, invocation and credentials. */
export type FunctionFacts = {
  /** `<family>/<verb-noun>`: the folder under `functions/` holding `handler.ts` and `route.ts`. */
  id: string
  family: Family
  /** Table access the function is granted. */
  access: 'none' | 'read' | 'write'
  /** Whether the routes sit behind the authorizer (false only for public routes). */
  auth: boolean
} & ResponseTransfer

/**
 * How API Gateway returns the answer. `stream`: Lambda response streaming (integration `responseTransferMode: STREAM`,
 * handler `lambdaStreamHandler`), whose answers have no 6 MB bound; the function keeps the usual memory and 29 s
 * timeout. `longRunning` (streams only): the stream may last up to 15 minutes (a completion, `calls/stream_query`), so
 * the function gets 15 minutes, 1024 MB, the streaming concurrency reservation and a duration alarm (infra/).
 */
type ResponseTransfer = { stream?: boolean; longRunning?: false } | { stream: true; longRunning: true }

/** One Lambda function and the routes it serves: one entry of `functions/manifest.ts`. */
export type FunctionDeclaration<R extends readonly RouteDeclaration[] = readonly RouteDeclaration[]> = FunctionFacts & {
  routes: R
}

function routeOf(route: RouteDeclaration): RouteDeclaration {
  const {
    method,
    path,
    summary,
    body,
    bodyMediaTypes,
    headers,
    query,
    response,
    responseMediaType,
    alternativeResponse,
    errors,
    redirect,
    example,
  } = route
  return {
    method,
    path,
    summary,
    ...(body === undefined ? {} : { body }),
    ...(bodyMediaTypes === undefined ? {} : { bodyMediaTypes }),
    ...(headers === undefined ? {} : { headers }),
    ...(query === undefined ? {} : { query }),
    ...(response === undefined ? {} : { response }),
    ...(responseMediaType === undefined ? {} : { responseMediaType }),
    ...(alternativeResponse === undefined ? {} : { alternativeResponse }),
    ...(errors === undefined ? {} : { errors }),
    ...(redirect === undefined ? {} : { redirect }),
    ...(example === undefined ? {} : { example }),
  }
}

/**
 * Declares a function that serves one route; the result is both the manifest entry (`routes`) and the route itself,
 * with its schemas' own types, so the handler registers `route.path` and validates with `route.body`.
 *
 * @example
 * export const route = declareRoute({
 *   id: 'tracing/read-obj', family: 'tracing', access: 'read', auth: true,
 *   method: 'POST', path: '/obj/read', summary: 'Read an object version', body: ObjReadReqSchema, response: ObjReadResSchema,
 * })
 * // handler.ts: createTracingApp().on(route.method, route.path, validate('json', route.body), …)
 */
export function declareRoute<const R extends FunctionFacts & RouteDeclaration>(
  declaration: R,
): R & FunctionDeclaration<readonly [RouteDeclaration]> {
  return { ...declaration, routes: [routeOf(declaration)] } as R & FunctionDeclaration<readonly [RouteDeclaration]>
}

/** Declares a function that serves several routes (aliases, a page and its assets); `routes` keep their own types. */
export function declareFunction<const R extends readonly RouteDeclaration[]>(
  declaration: FunctionFacts & { routes: R },
): FunctionDeclaration<R> {
  return declaration
}
