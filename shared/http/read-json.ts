import type { Context } from 'hono'
import { jsonInvalidIssue } from '#shared/errors/error-response'
import { RequestValidationError, UnsupportedMediaTypeError } from '#shared/errors/http-error'
import type { AppEnv } from '#shared/http/app-env'
import { scanJson } from '#shared/http/json-scan'
import { requestHeader } from '#shared/http/node-bindings'
import { requestText } from '#shared/http/request-body'
import { withExactQuery } from '#shared/schemas/query'

const NOT_A_DICT = {
  type: 'model_attributes_type',
  loc: ['body'],
  msg: 'Input should be a valid dictionary or object to extract fields from',
}

const MISSING_BODY = { type: 'missing', loc: ['body'], msg: 'Field required', input: null }

function mediaType(header: string | undefined): string {
  // What nearly every client sends, without splitting and lower-casing it.
  if (header === 'application/json') return header
  return (header ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? ''
}

function positionOf(error: unknown, text: string): number {
  const message = error instanceof Error ? error.message : ''
  const match = /position (\d+)/.exec(message)
  if (match) return Number(match[1])
  return /end of JSON/i.test(message) ? text.length : 0
}

/** Deepest nesting of arrays and objects a JSON body may have: pydantic-core's JSON parser stops at 200 as well. */
export const MAX_JSON_DEPTH = 200

/**
 * Where a JSON text first nests arrays and objects deeper than `limit`, or -1. Brackets inside strings do not count.
 * Code downstream (serialisers, validators, error reprs, DynamoDB) recurses once per level, so a body of a few KB of
 * brackets would otherwise overflow a stack and answer 500.
 */
export function excessNesting(text: string, limit = MAX_JSON_DEPTH): number {
  // Nesting deeper than `limit` needs more than `limit` opening and as many closing brackets.
  if (text.length <= 2 * limit) return -1
  return scanJson(text, limit).tooDeep
}

// The body's text under the family's content-type rule; an empty body is `missing`.
async function bodyText(c: Context<AppEnv>): Promise<string> {
  const type = mediaType(requestHeader(c, 'content-type'))
  if (c.get('family') === 'inference') {
    if (type !== 'application/json') {
      throw new UnsupportedMediaTypeError("Unsupported Media Type: Only 'application/json' is allowed")
    }
  } else if (type !== '' && !/^application\/([\w.-]+\+)?json$/.test(type)) {
    throw new RequestValidationError([NOT_A_DICT])
  }
  const text = await requestText(c)
  if (text.trim() === '') throw new RequestValidationError([MISSING_BODY])
  return text
}

function parseText(text: string): unknown {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (error) {
    throw new RequestValidationError([jsonInvalidIssue(positionOf(error, text), (error as Error).message)])
  }
  // FastAPI reads a `null` body as no body: a required body model is then `missing` at ["body"]
  // (fastapi/dependencies/utils.py, `_validate_value_with_model_field`), before the model sees it.
  if (body === null) throw new RequestValidationError([MISSING_BODY])
  return body
}

function rejectNesting(tooDeep: number): void {
  if (tooDeep >= 0) {
    throw new RequestValidationError([
      jsonInvalidIssue(tooDeep, `arrays and objects nested deeper than ${MAX_JSON_DEPTH} levels`),
    ])
  }
}

/**
 * Reads and parses a JSON request body under the family's rules: inference requires `application/json` exactly
 * (vLLM's check, docs/inference.md §1); tracing and training parse a body without a content type as JSON (FastAPI) and
 * reject other types with a 422. An empty, `null` or malformed body, or one nested deeper than MAX_JSON_DEPTH, is a
 * validation error, never a 500; a body that is not UTF-8 is a 400 (`requestText`). A tracing body's `query` keeps
 * whether each number was written as a float (`withExactQuery`).
 */
export async function readJsonBody(c: Context<AppEnv>): Promise<unknown> {
  const text = await bodyText(c)
  const body = parseText(text)
  rejectNesting(excessNesting(text))
  // A tracing query's literals keep how their numbers were written (`1.0` is a float).
  return c.get('family') === 'tracing' ? withExactQuery(body, text) : body
}

/** A JSON body with its text and the elements of one of its array members as written (`parseJsonWithElements`). */
export type JsonWithElements = {
  value: unknown
  text: string
  /** The root object's array member's elements, each its exact text; undefined when there is no such array. */
  elements: string[] | undefined
}

/**
 * Parses a JSON body's text as `readJsonBody` does (the same 422s) and, in the same pass as the nesting check, cuts
 * out the exact text of each element of the root object's array member `key`.
 *
 * @example parseJsonWithElements(text, 'trajectory_groups').elements // each group as the client wrote it
 */
export function parseJsonWithElements(text: string, key: string): JsonWithElements {
  const value = parseText(text)
  const { tooDeep, elements } = scanJson(text, MAX_JSON_DEPTH, key)
  rejectNesting(tooDeep)
  return { value, text, elements }
}

/**
 * `readJsonBody` for a body whose array member `key` must be kept as sent (a training log's groups): the parsed value,
 * the text and that array's elements as written. Not for tracing bodies (no `withExactQuery`).
 */
export async function readJsonBodyWithElements(c: Context<AppEnv>, key: string): Promise<JsonWithElements> {
  return parseJsonWithElements(await bodyText(c), key)
}
