import * as z from 'zod/mini'
import { parseRequestDatetime } from '#shared/tracing/request-datetime'

const MESSAGES = {
  datetime_type: 'Input should be a valid datetime',
  datetime_parsing: 'Input should be a valid datetime, ',
  datetime_from_date_parsing: 'Input should be a valid datetime or date, ',
}

/**
 * A datetime as Weave (pydantic) accepts it: an ISO 8601 datetime or date (naive = UTC), or epoch seconds as a number
 * or numeric string, milliseconds above 2e10 in magnitude. Failures carry pydantic's type, message and `ctx.error`.
 */
export const DatetimeSchema = z
  .custom<string | number>()
  .check(
    z.superRefine((value, ctx) => {
      // A missing field stays pydantic's `missing`, which the issue converter derives from an undefined input.
      if (value === undefined) {
        ctx.issues.push({ code: 'invalid_type', expected: 'date', input: value })
        return
      }
      const parsed = parseRequestDatetime(value)
      if (parsed.ok) return
      if (parsed.type === undefined) {
        // pydantic accepts it, but the fixed-width store cannot hold a UTC instant in year 10000.
        ctx.issues.push({ code: 'custom', message: 'Input should be a valid datetime', input: value })
        return
      }
      ctx.issues.push({
        code: 'custom',
        message: `${MESSAGES[parsed.type]}${parsed.reason ?? ''}`,
        input: value,
        params: { type: parsed.type, ...(parsed.reason === undefined ? {} : { ctx: { error: parsed.reason } }) },
      })
    }),
  )
  // OpenAPI: a custom schema has no JSON Schema of its own.
  .register(z.globalRegistry, { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'number' }] })
