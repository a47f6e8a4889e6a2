/**
 * Typed errors thrown by shared logic and handlers. Each route family renders them in its contract's body shape
 * (see the family mappers beside this file); nothing else decides a status code.
 */

/** One problem in a request, in the pydantic/FastAPI shape the tracing and training contracts use. */
export type ValidationIssue = {
  type: string
  loc: (string | number)[]
  msg: string
  input?: unknown
  ctx?: Record<string, unknown>
}

/** Options shared by every HTTP error. */
export type HttpErrorOptions = {
  cause?: unknown
  /** Extra keys merged into the tracing body (e.g. `deleted_at`). */
  details?: Record<string, unknown>
  /** The request parameter at fault (inference `param`). */
  param?: string
  /** Response headers to add (e.g. `Retry-After`). */
  headers?: Record<string, string>
}

/** Base class of every error that maps to an HTTP status. */
export abstract class HttpError extends Error {
  abstract readonly statusCode: number
  readonly details: Record<string, unknown> | undefined
  readonly param: string | undefined
  readonly headers: Record<string, string> | undefined

  constructor(message: string, options: HttpErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.details = options.details
    this.param = options.param
    this.headers = options.headers
  }
}

/** 400: the request is well-formed but not acceptable to the server logic. */
export class BadRequestError extends HttpError {
  readonly statusCode = 400
}

/** 401: missing or invalid credentials. */
export class UnauthorizedError extends HttpError {
  readonly statusCode = 401
}

/** 403: valid credentials, but no access to the requested entity or project. */
export class ForbiddenError extends HttpError {
  readonly statusCode = 403
}

/** 404: the resource does not exist (or belongs to someone the caller cannot see). */
export class NotFoundError extends HttpError {
  readonly statusCode = 404
}

/** 409: the write conflicts with the stored state. */
export class ConflictError extends HttpError {
  readonly statusCode = 409
}

/** 413: the request body is larger than Loom accepts. */
export class PayloadTooLargeError extends HttpError {
  readonly statusCode = 413
}

/** 429: a rate or concurrency limit was reached. */
export class TooManyRequestsError extends HttpError {
  readonly statusCode = 429
}

/** 501: the operation is not implemented. */
export class NotImplementedError extends HttpError {
  readonly statusCode = 501
}

/** 503: a dependency (DynamoDB, an upstream model server) is unavailable; retry later. */
export class ServiceUnavailableError extends HttpError {
  readonly statusCode = 503
}

/**
 * A 503 for what Loom cannot serve because of its own configuration (an unusable upstream URL, credential reference,
 * engine settings, catalog file or price table; docs/inference.md §4.4). Not transient, so no `Retry-After`; and
 * `x-should-retry: false`, which OpenAI's SDKs honour over their default retries of any 503.
 */
export function misconfigured(
  message: string,
  options: Omit<HttpErrorOptions, 'headers'> = {},
): ServiceUnavailableError {
  return new ServiceUnavailableError(message, { ...options, headers: { 'x-should-retry': 'false' } })
}

/**
 * 499 (nginx's "client closed request"): the client went away before its answer, so whatever the request's work failed
 * with afterwards is not the server's fault; the answer reaches no one and is logged and counted as a 4xx.
 */
export class ClientClosedRequestError extends HttpError {
  readonly statusCode = 499
}

/**
 * An HTTP exception of the framework itself (no route for the path, none for the method, Hono's own refusals), with
 * the status it answers. Inference names the status phrase as `type` for these (docs/inference.md §4.2).
 */
export class FrameworkHttpError extends HttpError {
  readonly statusCode: number

  constructor(statusCode: number, message: string, options: HttpErrorOptions = {}) {
    super(message, options)
    this.statusCode = statusCode
  }
}

/**
 * The request did not match its schema. Families render it differently: inference as 400 with vLLM's message,
 * tracing and training as 422 `{"detail": [...]}`.
 */
export class RequestValidationError extends HttpError {
  readonly statusCode = 422
  readonly issues: ValidationIssue[]

  constructor(issues: ValidationIssue[], options: HttpErrorOptions = {}) {
    super(issues.map((i) => i.msg).join('; '), options)
    this.issues = issues
  }
}

/** The content type of the body is not JSON where the route requires it. */
export class UnsupportedMediaTypeError extends HttpError {
  readonly statusCode = 415
}
