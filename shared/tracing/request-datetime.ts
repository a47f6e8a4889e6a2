/**
 * Request datetimes read as pydantic v2 reads a JSON `datetime` field (pydantic-core on speedate), with its error types
 * and reasons. Naive values mean UTC here. Query literals follow ClickHouse instead (`parseDatetimeMicros` in time.ts).
 */

/** pydantic's error types for a datetime field. */
export type DatetimeErrorType = 'datetime_type' | 'datetime_parsing' | 'datetime_from_date_parsing'

/**
 * A request datetime: whole epoch seconds plus microseconds (0..999999, exact where epoch microseconds in one number
 * would not be), or pydantic's error type and reason. A failure without a type is a value pydantic accepts but the
 * fixed-width store cannot hold (an offset moving 9999-12-31 into year 10000).
 */
export type RequestDatetime =
  | { ok: true; seconds: number; micro: number }
  | { ok: false; type?: DatetimeErrorType; reason?: string }

// speedate's limits and messages: timestamps above 2e10 in magnitude are milliseconds; 0000-01-01 .. 9999-12-31T23:59:59.
const MS_WATERSHED = 2e10
const MIN_SECONDS = -62_167_219_200
const MAX_SECONDS = 253_402_300_799
const YEAR_1_SECONDS = -62_135_596_800
const STORABLE_SECONDS = 253_402_300_800
const TOO_LARGE = 'dates after 9999 are not supported as unix timestamps'
const TOO_SMALL = 'dates before 0000 are not supported as unix timestamps'
const YEAR_0 = 'year 0 is out of range'

// Lexical's float grammar (speedate reads a string holding a `.` as a float) and its integer grammar (an i64).
const FLOAT_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const INT_RE = /^[+-]?\d+$/
const I64_MAX = 2n ** 63n - 1n
const encoder = new TextEncoder()

type Timestamp = { seconds: number; micro: number } | string

const fail = (type: DatetimeErrorType, reason: string): RequestDatetime => ({ ok: false, type, reason })

// speedate's from_timestamp: `t` whole seconds, or milliseconds when |t| > 2e10, plus `micro`; a string on failure.
function fromTimestamp(t: number, micro: number): Timestamp {
  if (!Number.isFinite(t)) return t > 0 ? TOO_LARGE : TOO_SMALL
  let seconds = t
  let total = micro
  if (Math.abs(t) > MS_WATERSHED) {
    const ms = t % 1000
    seconds = (t - ms) / 1000
    total += ms * 1000
    if (ms < 0) {
      seconds -= 1
      total += 1_000_000
    }
  }
  seconds += Math.floor(total / 1_000_000)
  if (seconds < MIN_SECONDS) return TOO_SMALL
  if (seconds > MAX_SECONDS) return TOO_LARGE
  return { seconds, micro: total % 1_000_000 }
}

function checked(ts: Timestamp, type: DatetimeErrorType): RequestDatetime {
  if (typeof ts === 'string') return fail(type, ts)
  return ts.seconds < YEAR_1_SECONDS ? fail('datetime_parsing', YEAR_0) : { ok: true, ...ts }
}

// A JSON number (pydantic-core's float_as_datetime): the floor is the timestamp, and the fraction's magnitude is added
// forwards in microseconds, or in milliseconds' microseconds above 2e10 (so -1.25 reads as -2 s + 0.25 s, as pydantic
// does, and 20000000000.5 as 2e10 s + 500 µs).
function fromNumber(value: number): RequestDatetime {
  if (Number.isNaN(value)) return fail('datetime_parsing', 'NaN values not permitted')
  if (!Number.isFinite(value)) return checked(fromTimestamp(value, 0), 'datetime_parsing')
  const fraction = Math.abs(value - Math.trunc(value))
  const micro = Math.round(Math.abs(value) > MS_WATERSHED ? fraction * 1e3 : fraction * 1e6)
  return checked(fromTimestamp(Math.floor(value), micro), 'datetime_parsing')
}

// A numeric string (speedate): an i64 goes as is; a float is divided by 1000 first when above 2e10 in magnitude, and
// its floor then goes through the same watershed again. Undefined when the string is not a number.
function fromNumericString(value: string): Timestamp | undefined {
  if (value.includes('.')) {
    if (!FLOAT_RE.test(value)) return undefined
    const float = Number(value)
    const normalised = Math.abs(float) > MS_WATERSHED ? float / 1000 : float
    const seconds = Math.floor(normalised)
    if (!Number.isFinite(seconds)) return normalised > 0 ? TOO_LARGE : TOO_SMALL
    return fromTimestamp(seconds, Math.round((normalised - seconds) * 1e6))
  }
  if (!INT_RE.test(value)) return undefined
  const int = BigInt(value)
  return int > I64_MAX || int < -I64_MAX ? undefined : fromTimestamp(Number(int), 0)
}

function digits(b: Uint8Array, at: number, count: number): number | undefined {
  let n = 0
  for (let i = at; i < at + count; i++) {
    const c = b[i]
    if (c === undefined || c < 0x30 || c > 0x39) return undefined
    n = n * 10 + c - 0x30
  }
  return n
}

type CalendarDate = { year: number; month: number; day: number }

// speedate's YYYY-MM-DD prefix, checked in its order; a string is its reason for rejecting the input.
function parseDate(b: Uint8Array): CalendarDate | string {
  if (b.length < 10) return 'input is too short'
  const year = digits(b, 0, 4)
  if (year === undefined) return 'invalid character in year'
  if (b[4] !== 0x2d) return 'invalid date separator, expected `-`'
  const month = digits(b, 5, 2)
  if (month === undefined) return 'invalid character in month'
  if (b[7] !== 0x2d) return 'invalid date separator, expected `-`'
  const day = digits(b, 8, 2)
  if (day === undefined) return 'invalid character in day'
  if (month < 1 || month > 12) return 'month value is outside expected range of 1-12'
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31
  return day < 1 || day > days ? 'day value is outside expected range' : { year, month, day }
}

// speedate's `HH:MM[:SS[.f+]][Z|±HH[:]MM]` from byte 11 to the end: seconds into the day less the offset, and
// microseconds (digits past six are dropped). Undefined when malformed or out of range (hour 24, second 60 included).
function parseTime(b: Uint8Array): { seconds: number; micro: number } | undefined {
  const hour = digits(b, 11, 2)
  const minute = digits(b, 14, 2)
  if (hour === undefined || b[13] !== 0x3a || minute === undefined || hour > 23 || minute > 59) return undefined
  let at = 16
  let second = 0
  let micro = 0
  if (b[at] === 0x3a) {
    const s = digits(b, 17, 2)
    if (s === undefined || s > 59) return undefined
    second = s
    at = 19
    if (b[at] === 0x2e || b[at] === 0x2c) {
      let fraction = ''
      for (at++; digits(b, at, 1) !== undefined; at++) fraction += String.fromCharCode(b[at] as number)
      if (fraction === '') return undefined
      micro = Number(fraction.slice(0, 6).padEnd(6, '0'))
    }
  }
  const offset = parseOffset(b, at)
  if (offset === undefined || offset.end !== b.length) return undefined
  return { seconds: hour * 3600 + minute * 60 + second - offset.seconds, micro }
}

// An optional `Z`, `z` or `±HH[:]MM` (U+2212 minus too) at byte `at`, under 24 hours: its seconds and where it ends.
function parseOffset(b: Uint8Array, at: number): { seconds: number; end: number } | undefined {
  if (at >= b.length) return { seconds: 0, end: at }
  if (b[at] === 0x5a || b[at] === 0x7a) return { seconds: 0, end: at + 1 }
  let sign = -1
  let h = at + 1
  if (b[at] === 0x2b) sign = 1
  else if (b[at] === 0xe2 && b[at + 1] === 0x88 && b[at + 2] === 0x92) h = at + 3
  else if (b[at] !== 0x2d) return undefined
  const hours = digits(b, h, 2)
  const m = b[h + 2] === 0x3a ? h + 3 : h + 2
  const minutes = digits(b, m, 2)
  if (hours === undefined || minutes === undefined || hours > 23 || minutes > 59) return undefined
  return { seconds: sign * (hours * 3600 + minutes * 60), end: m + 2 }
}

function epochSeconds({ year, month, day }: CalendarDate): number {
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day) // Date.UTC would read years 0..99 as 1900..1999
  return date.getTime() / 1000
}

function onDate(date: CalendarDate, secondsIntoDay: number, micro: number): RequestDatetime {
  if (date.year === 0) return fail('datetime_parsing', YEAR_0)
  const seconds = epochSeconds(date) + secondsIntoDay
  return seconds < STORABLE_SECONDS ? { ok: true, seconds, micro } : { ok: false }
}

// pydantic tries a datetime (RFC 3339, else a numeric timestamp), then a date (YYYY-MM-DD, else an integer timestamp)
// and reports the date's reason as `datetime_from_date_parsing`, so any failure after a valid date is "extra characters".
function fromString(value: string): RequestDatetime {
  const b = encoder.encode(value)
  const date = parseDate(b)
  const sep = b[10]
  if (typeof date !== 'string' && (sep === 0x54 || sep === 0x74 || sep === 0x20 || sep === 0x5f)) {
    const time = parseTime(b)
    if (time !== undefined) return onDate(date, time.seconds, time.micro)
  }
  const numeric = fromNumericString(value)
  // An integer out of range fails the date's integer fallback for the same reason; a float falls to the date's reason.
  if (numeric !== undefined && (typeof numeric !== 'string' || INT_RE.test(value))) {
    return checked(numeric, 'datetime_from_date_parsing')
  }
  if (typeof date === 'string') return fail('datetime_from_date_parsing', date)
  if (b.length > 10) return fail('datetime_from_date_parsing', 'unexpected extra characters at the end of the input')
  return onDate(date, 0, 0)
}

/**
 * Parses a request datetime as pydantic does: an ISO 8601 datetime or date, or a number (or numeric string) of epoch
 * seconds, milliseconds above 2e10 in magnitude.
 *
 * @example parseRequestDatetime('2024-02-30') // { ok: false, type: 'datetime_from_date_parsing', reason: 'day value is outside expected range' }
 */
export function parseRequestDatetime(value: unknown): RequestDatetime {
  if (typeof value === 'number') return fromNumber(value)
  if (typeof value === 'string') return fromString(value)
  return { ok: false, type: 'datetime_type' }
}
