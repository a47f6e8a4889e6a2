import { BadRequestError } from '#shared/errors/http-error'
import type { UsageQuery } from '#shared/schemas/usage'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
// A report spans at most a year of hourly rows per project and model.
const MAX_SPAN_MS = 366 * DAY_MS

/** The hours a usage report covers: hour buckets starting at or after `start` and before `end` (exclusive). */
export type UsageWindow = { start: Date; end: Date }

function parseTime(value: string, param: string): Date {
  const date = /^-?\d+(\.\d+)?$/.test(value) ? new Date(Number(value) * 1000) : new Date(value)
  if (Number.isNaN(date.getTime())) {
    throw new BadRequestError(`\`${param}\` must be an ISO 8601 time or Unix seconds, got '${value}'`, { param })
  }
  return date
}

// Counter keys hold the hour as `yyyy-mm-ddThh`; `toISOString` writes other years with a sign and six digits, which
// neither fits the key nor sorts with it (a range across year 10000 would be an inverted, refused Query).
function checkYears(date: Date, param: string): void {
  const year = date.getUTCFullYear()
  if (year < 0 || year > 9999) {
    throw new BadRequestError(`\`${param}\` must fall within the years 0000 to 9999`, { param })
  }
}

const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS
const ceilHour = (ms: number) => Math.ceil(ms / HOUR_MS) * HOUR_MS

/**
 * The effective window of a usage query (docs/inference.md §12): `start` rounded down to its hour, `end` exclusive, as
 * OpenAI's usage API reads `start_time` and `end_time`; so back-to-back windows never count an hour twice. Defaults:
 * `end` now, `start` the 24th hour bucket before `end` (24 buckets, the last one the hour in progress).
 */
export function usageWindow(query: UsageQuery, now: Date = new Date()): UsageWindow {
  const end = query.end === undefined ? now : parseTime(query.end, 'end')
  const start = query.start === undefined ? new Date(ceilHour(end.getTime()) - DAY_MS) : parseTime(query.start, 'start')
  checkYears(start, 'start')
  checkYears(end, 'end')
  if (start > end) throw new BadRequestError('`start` must not be after `end`', { param: 'start' })
  // The span as sent, so any 366 days are accepted; rounding `start` down adds at most one hour bucket.
  if (end.getTime() - start.getTime() > MAX_SPAN_MS) {
    throw new BadRequestError('The report spans at most 366 days', { param: 'start' })
  }
  return { start: new Date(floorHour(start.getTime())), end }
}

/**
 * Refuses a query parameter given more than once (`?start=a&start=b`): a report must not silently pick one of two
 * windows or projects. Unknown parameters are ignored, as the schema ignores them.
 */
export function assertSingleValues(queries: Record<string, string[]>, names: readonly string[]): void {
  for (const name of names) {
    if ((queries[name]?.length ?? 0) > 1) {
      throw new BadRequestError(`\`${name}\` was given more than once`, { param: name })
    }
  }
}
