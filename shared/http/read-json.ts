import type { Context } from 'hono'
import { jsonInvalidIssue } from '#shared/errors/error-response'
import { RequestValidationError, UnsupportedMediaTypeError } from '#shared/errors/http-error'
import type { AppEnv } from '#shared/http/app-env'
import { requestHeader } from '#shared/http/node-bindings'
import { requestText } from '#shared/http/request-body'

const NOT_A_DICT = {
  type: 'model_attributes_type',
  loc: ['body'],
  msg: 'Input should be a valid dictionary or object to extract fields from',
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? ''
}

function positionOf(error: unknown, text: string): number {
  const message = error instanceof Error ? error.message : ''
  const match = /position (\d+)/.exec(message)
  if (match) return Number(match[1])
  return /end of JSON/i.test(message) ? text.length : 0
}

/**
 * Reads and parses a JSON request body under the family's rules: inference requires `application/json` exactly
 * (vLLM's check, contract §1); tracing and training parse a body without a content type as JSON (FastAPI) and reject
 * other types with a 422. An empty or malformed body is a validation error, never a 500.
 */
export async function readJsonBody(c: Context<AppEnv>): Promise<unknown> {
  const type = mediaType(requestHeader(c, 'content-type'))
  const family = c.get('family')
  if (family === 'inference') {
    if (type !== 'application/json') {
      throw new UnsupportedMediaTypeError("Unsupported Media Type: Only 'application/json' is allowed")
    }
  } else if (type !== '' && !/^application\/([\w.-]+\+)?json$/.test(type)) {
    throw new RequestValidationError([NOT_A_DICT])
  }
  const text = await requestText(c)
  if (text.trim() === '') {
    throw new RequestValidationError([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new RequestValidationError([jsonInvalidIssue(positionOf(error, text), (error as Error).message)])
  }
}
