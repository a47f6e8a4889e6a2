import { BadRequestError, RequestValidationError } from '#shared/errors/http-error'
import { checkTimeZone, parseDateTimeMs } from '#shared/tracing/datetime'

const MAX_RANGE_MS = 31 * 24 * 3600 * 1000

function modelError(msg: string): never {
  throw new RequestValidationError([{ type: 'value_error', loc: ['body'], msg: `Value error, ${msg}` }])
}

/** Resolves and checks a stats window (the model validators: 422 on `end < start` or a range over 31 days). */
export function resolveWindow(req: { start: string | number; end?: string | number | null | undefined }): {
  startMs: number
  endMs: number
} {
  const startMs = parseDateTimeMs(req.start) as number
  const endMs = req.end == null ? Date.now() : (parseDateTimeMs(req.end) as number)
  if (endMs < startMs) modelError('Feedback request end must be after start')
  if (endMs - startMs > MAX_RANGE_MS) modelError('Feedback request date range cannot exceed 31 days')
  return { startMs, endMs }
}

/** Checks the time zone of a stats request (400 for an unknown zone). */
export function assertTimeZone(timeZone: string): void {
  try {
    checkTimeZone(timeZone)
  } catch {
    throw new BadRequestError(`Invalid timezone: ${timeZone}`)
  }
}

/** Automatic granularity (docs/tracing.md §12.4), then widened so the grid has at most 10,000 buckets. */
export function granularityFor(rangeSeconds: number, requested: number | null | undefined): number {
  let g = requested || 0
  if (g === 0) {
    if (rangeSeconds <= 2 * 3600) g = 300
    else if (rangeSeconds <= 12 * 3600) g = 3600
    else if (rangeSeconds <= 3 * 86400) g = 21600
    else if (rangeSeconds <= 14 * 86400) g = 43200
    else g = 86400
  }
  if (rangeSeconds / g > 10_000) g = Math.max(g, Math.floor(rangeSeconds / 10_000) + 1)
  return g
}

/** Epoch-aligned bucket starts (ms) from the interval holding `start` up to, not including, `end`. */
export function bucketGrid(startMs: number, endMs: number, g: number): number[] {
  const gMs = g * 1000
  const first = Math.floor(startMs / gMs) * gMs
  const out: number[] = []
  for (let t = first; t < endMs; t += gMs) out.push(t)
  return out
}
