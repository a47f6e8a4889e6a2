// Display formatting. Numbers keep the API's value (tokens and counts exactly, costs to 6 significant digits with the
// exact value in a tooltip), so what the page shows can be compared with what the API answered.

const DASH = '—'

/**
 * A duration in milliseconds: `850 ms`, `1.25 s`, `2m 05s`, `3h 04m`; `—` when unknown (a running call). Every unit is
 * truncated, as a clock shows time, never rounded up: 59,999 ms is `59.99 s`, not `60.00 s` (a minute in the wrong
 * unit), and 999.6 ms is `999 ms`.
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return DASH
  if (ms < 0) return `-${formatDuration(-ms)}`
  if (ms < 1000) return `${Math.floor(ms)} ms`
  if (ms < 60_000) {
    const hundredths = Math.floor(ms / 10)
    return `${Math.floor(hundredths / 100)}.${String(hundredths % 100).padStart(2, '0')} s`
  }
  const totalSeconds = Math.floor(ms / 1000)
  if (totalSeconds < 3600) {
    return `${Math.floor(totalSeconds / 60)}m ${String(totalSeconds % 60).padStart(2, '0')}s`
  }
  const minutes = Math.floor(totalSeconds / 60)
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`
}

// From 1e21 up JavaScript writes numbers in exponent notation (`1e+22`); Intl writes their digits (the shortest that
// read back as the same number, zeros after them).
const LARGE = 1e21
const largeCount = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })

/** An integer count with thousands separators (`12,345`, `10,000,000,000,000,000,000,000`), exact; `—` when absent. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return DASH
  if (Math.abs(n) >= LARGE) return largeCount.format(n)
  const sign = n < 0 ? '-' : ''
  const [int = '0', frac] = String(Math.abs(n)).split('.')
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${sign}${grouped}${frac === undefined ? '' : `.${frac}`}`
}

/** A total of `calls/query_stats` as shown: the count, with "+" when more match than were counted (`has_more`). */
export function formatTotal(stats: { count: number; has_more?: boolean }): string {
  return `${formatCount(stats.count)}${stats.has_more === true ? '+' : ''}`
}

/** The noun of a count: `one` for exactly 1, else `many` (`one` + "s" unless given): `1 trace`, `0 traces`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many
}

/** A count with its noun, singular for exactly 1: `1 call`, `12,345 calls`. */
export function formatCountOf(n: number, one: string, many?: string): string {
  return `${formatCount(n)} ${plural(n, one, many)}`
}

/** Token counts are counts. */
export const formatTokens = formatCount

// Beyond these magnitudes a number's digits would run off the page (1e300 is 301 of them) or past the 20 decimals
// `toFixed` keeps (1e-300 would read "0"), so they are written in exponent notation, as JavaScript writes them.
const FIXED_MAX = LARGE
const FIXED_MIN = 1e-12

/**
 * A number to at most 6 significant digits (`0.000123`, `1234.57`), in exponent notation only from 1e21 up and below
 * 1e-12 (`1e+300`, `1.23457e-300`), where the digits would no longer fit on a page or in `toFixed`.
 */
export function formatNumber(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return DASH
  if (n === 0) return '0'
  const rounded = Number(n.toPrecision(6))
  const size = Math.abs(rounded)
  if (size >= FIXED_MAX || size < FIXED_MIN) {
    const [mantissa = '0', exponent = '0'] = rounded.toExponential(5).split('e')
    return `${mantissa.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '')}e${exponent}`
  }
  const digits = Math.max(0, 5 - Math.floor(Math.log10(size)))
  return rounded
    .toFixed(Math.min(digits, 20))
    .replace(/(\.\d*?)0+$/, '$1')
    .replace(/\.$/, '')
}

/** A cost in US dollars: `$0.000123`, `$1.5`; `—` when the API has none (no price known). */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return DASH
  return `${usd < 0 ? '-' : ''}$${formatNumber(Math.abs(usd))}`
}

/** A share between 0 and 1 as a percentage with one decimal. */
export function formatPercent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return DASH
  return `${(share * 100).toFixed(1)}%`
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/**
 * A timestamp as `YYYY-MM-DD HH:MM:SS` in a time zone (the browser's by default); `—` for an absent or invalid one.
 * ISO strings with microseconds (the tracing API's) are accepted.
 */
export function formatDate(value: string | number | Date | null | undefined, timeZone?: string): string {
  if (value === null || value === undefined || value === '') return DASH
  const date = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(date.getTime())) return typeof value === 'string' ? value : DASH
  const key = timeZone ?? ''
  let fmt = formatters.get(key)
  if (fmt === undefined) {
    fmt = new Intl.DateTimeFormat('en-US', {
      ...(timeZone === undefined ? {} : { timeZone }),
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
    formatters.set(key, fmt)
  }
  const parts: Record<string, string> = {}
  for (const p of fmt.formatToParts(date)) parts[p.type] = p.value
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`
}

/** The browser's time zone (IANA name, e.g. `Europe/Berlin`), in which the console shows times unless it names another. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone
}

/** A timestamp as `formatDate` shows it in `timeZone`, with the zone named: `2025-01-01 14:00:00 (Europe/Berlin)`. */
export function formatDateIn(value: string | number | Date | null | undefined, timeZone: string): string {
  const shown = formatDate(value, timeZone)
  return shown === DASH ? DASH : `${shown} (${timeZone})`
}

/** Milliseconds between two ISO timestamps, or null when either is missing. */
export function durationBetween(start: string | null | undefined, end: string | null | undefined): number | null {
  if (!start || !end) return null
  const a = Date.parse(start)
  const b = Date.parse(end)
  return Number.isNaN(a) || Number.isNaN(b) ? null : b - a
}
