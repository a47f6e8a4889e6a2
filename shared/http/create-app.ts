import { Hono, type MiddlewareHandler } from 'hono'
import { type AuthScheme, authenticate, parseAuthorization } from '#shared/auth/authenticate'
import { config } from '#shared/config'
import type { ErrorMapper } from '#shared/errors/error-response'
import { ClientClosedRequestError, FrameworkHttpError } from '#shared/errors/http-error'
import { inferenceErrorResponse } from '#shared/errors/inference-errors'
import { tracingErrorResponse } from '#shared/errors/tracing-errors'
import { trainingErrorResponse } from '#shared/errors/training-errors'
import type { AppEnv, Family } from '#shared/http/app-env'
import { principalFromAuthorizer } from '#shared/http/authorizer-context'
import { inferenceProject } from '#shared/http/inference-project'
import { registerErrorMapper } from '#shared/http/lambda-handler'
import { requestMetrics } from '#shared/http/metrics'
import { clientGone, requestHeader, setResponseHeader } from '#shared/http/node-bindings'
import { rateLimits } from '#shared/http/rate-limit'
import { bodyLimit, drainUnreadBody } from '#shared/http/request-body'
import { methodsAt } from '#shared/http/route-methods'
import { infoEnabled, logger } from '#shared/logger'

/** Route prefixes that are served without credentials. */
export const PUBLIC_PATHS = ['/health', '/openapi.json', '/server_info'] as const

function requestContext(family: Family): MiddlewareHandler<AppEnv> {
  return function requestContext(c, next) {
    const started = performance.now()
    const requestId =
      requestHeader(c, 'x-request-id') ??
      (c.env?.lambdaContext ?? c.env?.context)?.awsRequestId ??
      globalThis.crypto.randomUUID()
    c.set('requestId', requestId)
    c.set('family', family)
    // Set before the handler so it is part of the response the handler builds: adding a header afterwards makes the
    // Node server re-read the finished body as a stream (a second write per response).
    setResponseHeader(c, 'X-Request-Id', requestId)
    if (!infoEnabled()) return next()
    return next().then(() =>
      logger.info('request', {
        requestId,
        family,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
      }),
    )
  }
}

function auth(scheme: AuthScheme): MiddlewareHandler<AppEnv> {
  return function auth(c, next) {
    // Behind API Gateway the REQUEST authorizer has already resolved the key; locally we resolve it here.
    // The cached authorizer policy spans routes, so the family's scheme is still checked here (no I/O).
    const header = requestHeader(c, 'authorization')
    const fromAuthorizer = principalFromAuthorizer(c.env?.requestContext?.authorizer)
    if (fromAuthorizer !== undefined) parseAuthorization(header, scheme)
    const principal = fromAuthorizer ?? authenticate(header, scheme)
    if (principal instanceof Promise) {
      return principal.then((p) => {
        c.set('auth', p)
        return next()
      })
    }
    c.set('auth', principal)
    return next()
  }
}

type FamilyOptions = {
  family: Family
  errors: ErrorMapper
  scheme?: AuthScheme
  extra?: MiddlewareHandler<AppEnv>[]
  /** Answer 405 with `Allow` for a path served under another method (else 404, as before for that family). */
  methodNotAllowed?: boolean
  /** Route `/path/` apart from `/path` (default false: the slash form takes the bare path's route). */
  strict?: boolean
}

function createFamilyApp({
  family,
  errors,
  scheme,
  extra = [],
  methodNotAllowed = false,
  strict = false,
}: FamilyOptions): Hono<AppEnv> {
  // Not strict (the default): a path with a trailing slash takes the route without it (`GET /v1/models/`), on every
  // route of every family, locally and on Lambda alike (API Gateway's REST API sends both spellings to the one
  // resource); the Console's app is strict.
  const app = new Hono<AppEnv>({ strict })
  registerErrorMapper(app, errors)
  app.onError(async (error, c) => {
    // A client that left first (a cancelled completion fails with the engine's 503 or the upstream's 499) is answered
    // 499 and logged with its request line: a server error would log a stack and count towards the 5xx alarm.
    const response = errors(
      clientGone(c) ? new ClientClosedRequestError('Client disconnected', { cause: error }) : error,
    )
    if (response.status >= 500) logger.error('request failed', { requestId: c.get('requestId'), error })
    for (const [name, value] of Object.entries(response.headers ?? {})) c.header(name, value)
    // Refused before its body was read (auth, size, a header): the client still uploading gets this answer.
    await drainUnreadBody(c, 2 * config.maxBodyBytes)
    return c.json(response.body as object, response.status as 500)
  })
  // What FastAPI's router raises as HTTP exceptions; each family renders it in its own shape.
  app.notFound((c) => {
    const { method, path } = c.req
    const allowed = methodNotAllowed ? methodsAt(app, path) : []
    const error =
      allowed.length > 0
        ? new FrameworkHttpError(405, `Method ${method} is not allowed for ${path}`, {
            headers: { Allow: allowed.join(', ') },
          })
        : new FrameworkHttpError(404, `No route for ${method} ${path}`)
    const response = errors(error)
    for (const [name, value] of Object.entries(response.headers ?? {})) c.header(name, value)
    return c.json(response.body as object, response.status as 404)
  })
  // First, so the record also counts what the later middleware answers (401, 413).
  app.use(requestMetrics())
  app.use(requestContext(family))
  app.use(bodyLimit(() => config.maxBodyBytes))
  if (scheme !== undefined) app.use(auth(scheme))
  for (const middleware of extra) app.use(middleware)
  // After the project middleware: a request refused for its project header costs no limiter I/O.
  if (scheme !== undefined) app.use(rateLimits)
  return app
}

/** The app for `/v1` inference routes: Bearer keys, OpenAI-style errors, project attribution header. */
export function createInferenceApp(): Hono<AppEnv> {
  return createFamilyApp({
    family: 'inference',
    errors: inferenceErrorResponse,
    scheme: 'bearer',
    extra: [inferenceProject],
    methodNotAllowed: true,
  })
}

/** The app for `/v1/preview` training routes: Bearer keys, FastAPI-style errors. */
export function createTrainingApp(): Hono<AppEnv> {
  return createFamilyApp({ family: 'training', errors: trainingErrorResponse, scheme: 'bearer' })
}

/** The app for Weave-compatible tracing routes: Basic `api:<key>` (or Bearer), `{"reason"}` errors. */
export function createTracingApp(): Hono<AppEnv> {
  return createFamilyApp({ family: 'tracing', errors: tracingErrorResponse, scheme: 'basic-or-bearer' })
}

/**
 * The app for public, unauthenticated routes (`/health`, `/openapi.json`, `/server_info`); `strict` routes `/path/`
 * apart from `/path` (the Console, whose `/console` redirects to `/console/`).
 */
export function createPublicApp(options: { strict?: boolean } = {}): Hono<AppEnv> {
  return createFamilyApp({ family: 'meta', errors: tracingErrorResponse, strict: options.strict === true })
}
