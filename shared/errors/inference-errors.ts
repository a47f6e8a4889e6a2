import { asHttpError, type ErrorResponse, STATUS_PHRASES } from '#shared/errors/error-response'
import {
  FrameworkHttpError,
  RequestValidationError,
  UnsupportedMediaTypeError,
  type ValidationIssue,
} from '#shared/errors/http-error'

// vLLM lists at most 10 errors of at most 1,000 characters each (docs/inference.md §4.1).
const MAX_LISTED = 10
const MAX_ERROR_CHARS = 1_000
const MAX_INPUT_CHARS = 200

const TYPES: Record<number, string> = {
  400: 'BadRequestError',
  401: 'AuthenticationError',
  402: 'PaymentRequiredError',
  403: 'PermissionDeniedError',
  404: 'NotFoundError',
  422: 'UnprocessableEntityError',
  429: 'RateLimitError',
  500: 'InternalServerError',
  501: 'NotImplementedError',
  503: 'ServiceUnavailableError',
}

// Python quotes with '…' unless the text holds a ' and no ", so rule messages stay matchable as substrings.
function pyString(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'"
  let body = value.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('\r', '\\r').replaceAll('\t', '\\t')
  if (quote === "'") body = body.replaceAll("'", "\\'")
  return `${quote}${body}${quote}`
}

/** Renders a value the way Python's `repr` prints parsed JSON, so messages read like vLLM's. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value)
  if (typeof value === 'string') return pyString(value)
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`
  }
  return String(value)
}

function summarise(input: unknown): string {
  const text = pyRepr(input)
  return text.length > MAX_INPUT_CHARS ? `${text.slice(0, MAX_INPUT_CHARS)}...` : text
}

function renderIssue(issue: ValidationIssue): string {
  const loc = `(${issue.loc.map(pyRepr).join(', ')}${issue.loc.length === 1 ? ',' : ''})`
  let text = `{'type': ${pyRepr(issue.type)}, 'loc': ${loc}, 'msg': ${pyRepr(issue.msg)}, 'input': ${summarise(issue.input)}`
  if (issue.ctx !== undefined) text += `, 'ctx': ${pyRepr(issue.ctx)}`
  text += '}'
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}...` : text
}

/** vLLM's request-validation message: `"{N} validation error(s):\n  {err}"`, capped at 10 listed errors. */
export function validationMessage(issues: ValidationIssue[]): string {
  const n = issues.length
  const lines = issues.slice(0, MAX_LISTED).map((issue) => `  ${renderIssue(issue)}`)
  if (n > MAX_LISTED) lines.push(`  ...and ${n - MAX_LISTED} more errors`)
  return `${n} validation error${n === 1 ? '' : 's'}:\n${lines.join('\n')}`
}

function body(message: string, type: string, param: string | null, code: number) {
  return { error: { message, type, param, code } }
}

/** The inference family's error mapping: `{"error": {"message", "type", "param", "code"}}`, validation → 400. */
export function inferenceErrorResponse(error: unknown): ErrorResponse {
  const http = asHttpError(error)
  if (http === undefined) {
    return {
      status: 500,
      body: body('The server had an error while processing your request', 'InternalServerError', null, 500),
    }
  }
  if (http instanceof RequestValidationError) {
    const first = http.issues[0]
    // vLLM joins the first error's location, list indices included (`body.messages.0.role`), dropping only
    // pydantic's internal markers (docs/inference.md §4.1), which these locations never carry.
    const param = http.param ?? (first ? first.loc.join('.') : null)
    return { status: 400, body: body(validationMessage(http.issues), 'Bad Request', param, 400) }
  }
  if (http instanceof UnsupportedMediaTypeError) {
    return { status: 400, body: body(http.message, 'Bad Request', null, 400) }
  }
  const status = http.statusCode
  // vLLM's handler of framework HTTP exceptions names the status phrase (`Not Found`, `Method Not Allowed`),
  // docs/inference.md §4.2.
  const type =
    http instanceof FrameworkHttpError
      ? (STATUS_PHRASES[status] ?? 'Error')
      : (TYPES[status] ?? STATUS_PHRASES[status] ?? 'Error')
  const response: ErrorResponse = { status, body: body(http.message, type, http.param ?? null, status) }
  if (http.headers) response.headers = http.headers
  return response
}
