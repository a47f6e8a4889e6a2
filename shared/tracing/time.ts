import { parseRequestDatetime } from '#shared/tracing/request-datetime'

/**
 * Datetimes in tracing: request datetimes parsed as pydantic does (request-datetime.ts), query literals as ClickHouse
 * does (ISO 8601 strings, naive means UTC, or epoch seconds), stored as fixed-width `YYYY-MM-DDTHH:MM:SS.ffffffZ`
 * strings (so they sort lexicographically in index keys) and rendered the way pydantic renders tz-aware UTC datetimes.
 */

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/

// Stored datetimes are fixed-width ISO strings, so epoch seconds must fall in years 0000..9999 (a JS Date also throws
// on formatting anything past ±8.64e12 s).
const MIN_EPOCH_SECONDS = -62_167_219_200
const MAX_EPOCH_SECONDS = 253_402_300_800

/**
 * Epoch milliseconds of a UTC calendar date and time, taking the year as given (`Date.UTC` reads years 0..99 as
 * 1900..1999).
 */
export function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, 0)
  return date.getTime()
}

// An ISO 8601 query literal as epoch microseconds; undefined when malformed or not storable.
function parseIso(value: string): number | undefined {
  const m = ISO_RE.exec(value.trim())
  if (!m) return undefined
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', tz] = m
  const ms = utcMillis(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))
  if (Number.isNaN(ms) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
    return undefined
  }
  let offsetMin = 0
  if (tz !== undefined && tz.toUpperCase() !== 'Z') {
    const sign = tz.startsWith('-') ? -1 : 1
    const digits = tz.slice(1).replace(':', '')
    offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'))
  }
  const micros = (ms - offsetMin * 60_000) * 1000 + Number(frac.padEnd(6, '0').slice(0, 6))
  if (micros < MIN_EPOCH_SECONDS * 1e6 || micros >= MAX_EPOCH_SECONDS * 1e6) return undefined
  return micros
}

/**
 * Parses a query literal compared with a datetime column into epoch microseconds (ClickHouse reads a number as epoch
 * seconds); undefined when it is not a valid datetime.
 */
export function parseDatetimeMicros(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return value >= MIN_EPOCH_SECONDS && value < MAX_EPOCH_SECONDS ? Math.round(value * 1e6) : undefined
  }
  return typeof value === 'string' ? parseIso(value) : undefined
}

/** The fixed-width storage form of epoch microseconds. */
export function microsToStored(micros: number): string {
  const ms = Math.floor(micros / 1000)
  const iso = new Date(ms).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ
  const rest = String(micros - ms * 1000).padStart(3, '0')
  return `${iso.slice(0, 23)}${rest}Z`
}

/** Parses a request datetime (pydantic's rules: `parseRequestDatetime`) into its storage form; undefined if invalid. */
export function toStoredDatetime(value: unknown): string | undefined {
  const parsed = parseRequestDatetime(value)
  if (!parsed.ok) return undefined
  const iso = new Date(parsed.seconds * 1000).toISOString() // YYYY-MM-DDTHH:MM:SS.000Z
  return `${iso.slice(0, 19)}.${String(parsed.micro).padStart(6, '0')}Z`
}

/** Renders a stored datetime as pydantic does for tz-aware UTC values (`…:SS.ffffffZ`, no fraction when zero). */
export function renderDatetime(stored: string): string {
  return stored.endsWith('.000000Z') ? `${stored.slice(0, 19)}Z` : stored
}

/** Epoch microseconds of a stored datetime. */
export function storedToMicros(stored: string): number {
  return Date.parse(`${stored.slice(0, 23)}Z`) * 1000 + Number(stored.slice(23, 26))
}
