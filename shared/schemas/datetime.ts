import * as z from 'zod/mini'
import { parseRequestDatetime } from '#shared/tracing/time'

/**
 * A datetime as Weave (pydantic) accepts it: ISO 8601 string (naive = UTC) or epoch seconds, milliseconds when the
 * number exceeds 2e10 in magnitude. An out-of-range number or year 0 is pydantic's `datetime_parsing` issue.
 */
export const DatetimeSchema = z.union([z.string(), z.number()]).check(
  z.superRefine((value, ctx) => {
    const parsed = parseRequestDatetime(value)
    if (parsed.ok) return
    if (parsed.reason === undefined) {
      ctx.issues.push({ code: 'custom', message: 'Input should be a valid datetime', input: value })
      return
    }
    ctx.issues.push({
      code: 'custom',
      message: `Input should be a valid datetime, ${parsed.reason}`,
      input: value,
      params: { type: 'datetime_parsing', ctx: { error: parsed.reason } },
    })
  }),
)
