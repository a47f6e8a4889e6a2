import { HTTPException } from 'hono/http-exception'
import {
  BadRequestError,
  HttpError,
  PayloadTooLargeError,
  RequestValidationError,
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
    return new FrameworkError(error.status, error.message || 'Request failed', error)
  }
  if (isKeyTooLong(error)) return new BadRequestError('An identifier in the request is too long', { cause: error })
  return undefined
}

// Ids from the request become table keys; DynamoDB refuses keys over 2048 (partition) or 1024 (sort) bytes, which is
// the caller's fault, not the server's. Only these key-size refusals are mapped: any other ValidationException is a bug.
const KEY_TOO_LONG = /size of hashkey has exceeded|size of all range keys has exceeded|key values? must be under/i

function isKeyTooLong(error: unknown): boolean {
  return error instanceof Error && error.name === 'ValidationException' && KEY_TOO_LONG.test(error.message)
}

class FrameworkError extends HttpError {
  readonly statusCode: number
  constructor(status: number, message: string, cause: unknown) {
    super(message, { cause })
    this.statusCode = status
  }
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
