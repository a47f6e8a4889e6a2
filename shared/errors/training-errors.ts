import { asHttpError, type ErrorResponse } from '#shared/errors/error-response'
import { RequestValidationError } from '#shared/errors/http-error'

/** The training family's error mapping: 422 `{"detail": [...]}` for validation, `{"detail": "..."}` otherwise. */
export function trainingErrorResponse(error: unknown): ErrorResponse {
  const http = asHttpError(error)
  if (http === undefined) return { status: 500, body: { detail: 'Internal server error' } }
  if (http instanceof RequestValidationError) return { status: 422, body: { detail: http.issues } }
  const response: ErrorResponse = { status: http.statusCode, body: { detail: http.message } }
  if (http.headers) response.headers = http.headers
  return response
}
