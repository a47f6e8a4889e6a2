import { asHttpError, type ErrorResponse } from '#shared/errors/error-response'
import { HttpError, PayloadTooLargeError, RequestValidationError } from '#shared/errors/http-error'

/** The tracing family's error mapping: `{"reason": ...}` plus extra keys; request validation 422 `{"detail": [...]}`. */
export function tracingErrorResponse(error: unknown): ErrorResponse {
  const http = asHttpError(error)
  if (http === undefined) return { status: 500, body: { reason: 'Internal server error' } }
  if (http instanceof RequestValidationError) return { status: 422, body: { detail: http.issues } }
  // Weave answers RequestTooLarge with a fixed reason (docs/tracing.md §3).
  if (http instanceof PayloadTooLargeError) return { status: 413, body: { reason: 'Request too large' } }
  const response: ErrorResponse = { status: http.statusCode, body: { reason: http.message, ...http.details } }
  if (http.headers) response.headers = http.headers
  return response
}

/**
 * A query or sort path that names no queryable field (the reference's `InvalidFieldError`): 422 with
 * `{"reason": ...}` (docs/tracing.md §3, §6.2).
 */
export class InvalidFieldError extends HttpError {
  readonly statusCode = 422
}
