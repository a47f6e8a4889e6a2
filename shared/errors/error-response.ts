import { HTTPException } from 'hono/http-exception'
import { config } from '#shared/config'
import {
  BadRequestError,
  FrameworkHttpError,
  HttpError,
  PayloadTooLargeError,
  RequestValidationError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
  type ValidationIssue,
} from '#shared/errors/http-error'

/** A rendered error: status, JSON body and extra headers. */
export type ErrorResponse = {
  status: number
  body: unknown
  headers?: Record<string, string>
}

/** Maps one thrown value to the response a route family answers with. */
export type ErrorMapper = (error: unknown) => ErrorResponse

/**
 * Normalises what may be thrown on a route (Loom's typed errors, Hono's framework exceptions) into an `HttpError`,
 * or undefined for an unknown error, which every family answers with a generic 500.
 */
export function asHttpError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error
  if (error instanceof HTTPException) {
    if (error.status === 413) return new PayloadTooLargeError('Request too large', { cause: error })
    if (error.status === 415) return new UnsupportedMediaTypeError(error.message, { cause: error })
    if (error.status === 400 && /malformed json/i.test(error.message)) {
      return new RequestValidationError([jsonInvalidIssue(0, 'JSON decode error')], { cause: error })
    }
    return new FrameworkHttpError(error.status, error.message || 'Request failed', { cause: error })
  }
  if (isKeyTooLong(error)) return new BadRequestError('An identifier in the request is too long', { cause: error })
  if (isItemTooLarge(error)) return new PayloadTooLargeError('Request too large to store', { cause: error })
  if (isDependencyFault(error)) return dependencyUnavailable(error)
  return undefined
}

/** The message of a 503 answered because the data store stayed throttled or unreachable after its retries. */
export const UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable, please try again later'

/** A 503 with `Retry-After` for a dependency that stayed throttled or unreachable after the client's own retries. */
export function dependencyUnavailable(cause: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError(UNAVAILABLE_MESSAGE, {
    cause,
    headers: { 'Retry-After': String(config.dynamo.retryAfterSeconds) },
  })
}

// What the AWS SDK throws once its retries are spent: throttling, the service's 5xx, or the network. These are the
// platform's state, not the request's fault, so they are a 503 the client may retry, never a 500.
const SDK_FAULT_NAMES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
])
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

type SdkLike = { name?: unknown; code?: unknown; cause?: unknown; $metadata?: { httpStatusCode?: number } }

function isDependencyFault(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false
  const e = error as SdkLike
  if (typeof e.name === 'string' && SDK_FAULT_NAMES.has(e.name)) return true
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true
  const status = e.$metadata?.httpStatusCode
  if (typeof status === 'number' && status >= 500) return true
  return isDependencyFault(e.cause, depth + 1)
}

// Ids from the request become table keys; DynamoDB refuses keys over 2048 (partition) or 1024 (sort) bytes, which is
// the caller's fault, not the server's. Only these key-size refusals are mapped: any other ValidationException is a bug.
const KEY_TOO_LONG = /size of hashkey has exceeded|size of all range keys has exceeded|key values? must be under/i

function isKeyTooLong(error: unknown): boolean {
  return error instanceof Error && error.name === 'ValidationException' && KEY_TOO_LONG.test(error.message)
}

// The engine's own item-size refusal (an update growing a stored item past 400 KB, which no check before the write can
// see): the request's values are too large, a 413.
const ITEM_TOO_LARGE = /item size (to update )?has exceeded the maximum allowed size/i

/** Whether DynamoDB refused a write because the item would pass 400 KB. */
export function isItemTooLarge(error: unknown): boolean {
  return error instanceof Error && error.name === 'ValidationException' && ITEM_TOO_LARGE.test(error.message)
}

/** The pydantic issue FastAPI reports for a body that is not valid JSON. */
export function jsonInvalidIssue(position: number, detail: string): ValidationIssue {
  return { type: 'json_invalid', loc: ['body', position], msg: 'JSON decode error', input: {}, ctx: { error: detail } }
}

/** HTTP reason phrases used where a contract names the status phrase as the error type. */
export const STATUS_PHRASES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
}
