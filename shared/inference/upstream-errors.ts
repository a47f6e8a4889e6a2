import { HttpError } from '#shared/errors/http-error'
import { logger } from '#shared/logger'

// What an upstream's failures become for the client: the contract's errors, with the upstream's status, message,
// param and `Retry-After` where they are the client's to see.

/** An error answered on behalf of an upstream model server, with any status the contract allows. */
export class UpstreamError extends HttpError {
  readonly statusCode: number
  constructor(
    status: number,
    message: string,
    options: { param?: string; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, options)
    this.statusCode = status
  }
}

/** The message the contract gives unreachable or overloaded engines (W&B's 503). */
export const UNAVAILABLE = 'The engine is currently overloaded, please try again later'

// The gateway already retried; an engine that stays unreachable for that long is worth a short pause.
const RETRY_AFTER_S = 1

// An upstream `Retry-After` in seconds from `now`: delay-seconds (at most 9 digits), or an HTTP date (`… GMT`).
function delaySeconds(value: string | undefined, now: number): number {
  if (value === undefined) return 0
  if (/^\d{1,9}$/.test(value)) return Number(value)
  const date = /GMT$/.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(date) ? 0 : Math.ceil((date - now) / 1_000)
}

/**
 * The 503 of an engine that stayed unreachable or overloaded past the gateway's retries, with `Retry-After` in
 * seconds: Loom's 1, or more when the upstream's last answer was a 503 whose own `Retry-After` (seconds, or an HTTP date
 * counted from now) asks for longer.
 */
export function engineUnavailable(cause: unknown, upstreamRetryAfter?: string, now = Date.now()): UpstreamError {
  const seconds = Math.max(RETRY_AFTER_S, delaySeconds(upstreamRetryAfter, now))
  return new UpstreamError(503, UNAVAILABLE, { cause, headers: { 'Retry-After': String(seconds) } })
}

// An upstream's `Retry-After` worth passing on: delay-seconds or an HTTP date, nothing longer.
const RETRY_AFTER = /^[\x20-\x7e]{1,64}$/

/** The `Retry-After` of an upstream's raw headers when it is worth passing on, else undefined. */
export function retryAfterOf(rawHeaders: Buffer[] | string[] | null | undefined): string | undefined {
  if (!rawHeaders) return undefined
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = String(rawHeaders[i])
    if (name.length !== 11 || name.toLowerCase() !== 'retry-after') continue
    const value = String(rawHeaders[i + 1]).trim()
    return RETRY_AFTER.test(value) ? value : undefined
  }
  return undefined
}

type UpstreamErrorBody = { error?: unknown; message?: unknown; detail?: unknown; param?: unknown }

/**
 * Maps an upstream error answer to the contract's error: client errors keep their status, message, param and
 * `Retry-After` (an overloaded engine's 429 says when to come back); a rejected upstream credential or unknown upstream
 * model is Loom's misconfiguration, so the caller sees a 500.
 */
export function upstreamError(status: number, text: string, retryAfter?: string): UpstreamError {
  let message: string | undefined
  let param: string | undefined
  try {
    const body = JSON.parse(text) as UpstreamErrorBody
    const inner = typeof body.error === 'object' && body.error !== null ? (body.error as UpstreamErrorBody) : body
    const raw = inner.message ?? (typeof body.error === 'string' ? body.error : undefined) ?? body.detail
    message = typeof raw === 'string' ? raw : raw === undefined ? undefined : JSON.stringify(raw)
    if (typeof inner.param === 'string') param = inner.param
  } catch {
    // Not an OpenAI-style error (vLLM always answers one): a proxy's or load balancer's page, which may name internal
    // hosts. The client gets the generic message; the text goes to the log.
    if (text.trim() !== '')
      logger.warn('upstream answered an error that is not JSON', { status, body: text.slice(0, 1_000) })
  }
  if (status === 401 || status === 403 || status === 404 || status < 400 || status > 599) {
    logger.error('upstream refused the gateway', { status, upstreamMessage: message })
    return new UpstreamError(500, 'The server had an error while processing your request')
  }
  const fallback = status >= 500 ? 'The server had an error while processing your request' : 'Bad Request'
  const options: { param?: string; headers?: Record<string, string> } = {}
  if (param !== undefined) options.param = param
  if (retryAfter !== undefined) options.headers = { 'Retry-After': retryAfter }
  return new UpstreamError(status, message ?? fallback, options)
}
