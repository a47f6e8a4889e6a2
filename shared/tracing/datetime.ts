import { parseRequestDatetime } from '#shared/tracing/request-datetime'
import { utcMillis } from '#shared/tracing/time'

/**
 * Parses a request datetime as pydantic does (ISO 8601, naive means UTC; or epoch seconds, milliseconds above 2e10)
 * to whole epoch milliseconds; undefined when invalid.
 */
export function parseDateTimeMs(value: unknown): number | undefined {
  const parsed = parseRequestDatetime(value)
  return parsed.ok ? parsed.seconds * 1000 + Math.floor(parsed.micro / 1000) : undefined
}

/** A UTC instant as pydantic serialises it: `2024-01-01T00:00:00Z`, fraction only when non-zero. */
export function pydanticUtc(ms: number): string {
  const iso = new Date(ms).toISOString()
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : `${iso.slice(0, -1)}000Z`
}

/** Throws RangeError unless `timeZone` is an IANA zone this runtime knows. */
export function checkTimeZone(timeZone: string): void {
  new Intl.DateTimeFormat('en-US', { timeZone })
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/** An instant as ISO 8601 in a time zone with its offset (`2024-01-01T00:00:00+00:00`), like Python's isoformat. */
export function isoInZone(ms: number, timeZone: string): string {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      era: 'short',
    })
    formatters.set(timeZone, f)
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]))
  // Intl counts years by era (1 BC, 1 AD); ISO 8601 counts year 0.
  const year = p.era === 'BC' ? 1 - Number(p.year) : Number(p.year)
  const local = utcMillis(year, Number(p.month), Number(p.day), Number(p.hour), Number(p.minute), Number(p.second))
  const offsetMin = Math.round((local - Math.floor(ms / 1000) * 1000) / 60_000)
  const sign = offsetMin < 0 ? '-' : '+'
  const abs = Math.abs(offsetMin)
  const off = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
  return `${String(year).padStart(4, '0')}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${off}`
}
