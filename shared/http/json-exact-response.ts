import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { stringifyJsonExact } from '#shared/tracing/json-exact'

/**
 * `c.json(body, status)` for bodies that may hold exact numbers (`PyFloat`, `PyInt` from `shared/tracing/json-exact`):
 * they are written as Python writes them (`1.0`, all digits of a big integer) instead of as JavaScript numbers.
 *
 * @example return jsonExactResponse(c, { obj }, 200)
 */
export function jsonExactResponse(c: Context, body: unknown, status: ContentfulStatusCode = 200): Response {
  return c.body(stringifyJsonExact(body), status, { 'content-type': 'application/json' })
}
