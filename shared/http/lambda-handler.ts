import type { Hono } from 'hono'
import { handle } from 'hono/aws-lambda'
import type { ErrorMapper } from '#shared/errors/error-response'
import { HttpError } from '#shared/errors/http-error'
import type { AppEnv } from '#shared/http/app-env'

/**
 * What a synchronous Lambda invocation may return, in bytes: the whole API Gateway proxy result as JSON (the body
 * escaped once more inside it). Past it Lambda fails the invocation and API Gateway answers 502 without a body.
 */
export const LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024

/** 413: an answer larger than a Lambda function may return; narrower requests (limits, pages, streams) get it. */
export class ResponseTooLargeError extends HttpError {
  readonly statusCode = 413
}

const mappers = new WeakMap<object, ErrorMapper>()

/** Records the family error mapping of an app, for its Lambda handler's own refusals (create-app.ts). */
export function registerErrorMapper(app: object, errors: ErrorMapper): void {
  mappers.set(app, errors)
}

type ProxyResult = {
  statusCode: number
  body: string
  headers?: Record<string, string>
  multiValueHeaders?: Record<string, string[]>
  isBase64Encoded: boolean
}

// The refusal's headers where the result keeps them: REST (v1) events get `multiValueHeaders`, others `headers`.
function withHeaders(result: ProxyResult, extra: Record<string, string>): Partial<ProxyResult> {
  if (result.multiValueHeaders !== undefined) {
    const multi = { ...result.multiValueHeaders }
    for (const [name, value] of Object.entries(extra)) multi[name] = [value]
    return { multiValueHeaders: multi }
  }
  return { headers: { ...result.headers, ...extra } }
}

// Below this a body cannot take the result past the limit, escaped or not (JSON escaping at most doubles ASCII text
// and writes other characters as at most 6 bytes for 3): the common case costs one length check.
const CERTAINLY_FITS = LAMBDA_RESPONSE_BYTES / 6

function fits(result: ProxyResult): boolean {
  if (typeof result?.body !== 'string' || result.body.length < CERTAINLY_FITS) return true
  return Buffer.byteLength(JSON.stringify(result)) <= LAMBDA_RESPONSE_BYTES
}

/**
 * `handle(app)` of hono/aws-lambda for a buffered function, except that an answer Lambda could not return is replaced
 * by a 413 in the app's family shape naming the size, instead of the bodiless 502 API Gateway would give.
 *
 * @example export const handler = lambdaHandler(app)
 */
export function lambdaHandler<E extends AppEnv>(app: Hono<E>, options?: Parameters<typeof handle>[1]) {
  const handler = handle(app, options)
  return async (...args: Parameters<typeof handler>): Promise<Awaited<ReturnType<typeof handler>>> => {
    const result = await handler(...args)
    const proxy = result as unknown as ProxyResult
    if (fits(proxy)) return result
    const size = Buffer.byteLength(proxy.body)
    const errors = mappers.get(app)
    const error = new ResponseTooLargeError(
      `The answer (${size} bytes) is larger than the ${LAMBDA_RESPONSE_BYTES} bytes a Lambda function may return: ask for less (a smaller limit, pages, or the route's streaming form)`,
    )
    const response = errors?.(error) ?? { status: 413, body: { reason: error.message } }
    return {
      ...proxy,
      ...withHeaders(proxy, { 'content-type': 'application/json', ...response.headers }),
      statusCode: response.status,
      body: JSON.stringify(response.body),
      isBase64Encoded: false,
    } as unknown as Awaited<ReturnType<typeof handler>>
  }
}
