import { describe, expect, it } from 'vitest'
import {
  durationBetween,
  formatCost,
  formatCount,
  formatCountOf,
  formatDate,
  formatDateIn,
  formatDuration,
  formatNumber,
  formatPercent,
  formatTokens,
  formatTotal,
  plural,
} from '../../console/src/lib/format.js'

describe('formatDuration', () => {
  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [999.6, '999 ms'],
    [1000, '1.00 s'],
    [1250, '1.25 s'],
    [1_999.9, '1.99 s'],
    [59_994, '59.99 s'],
    [59_999, '59.99 s'],
    [59_999.9, '59.99 s'],
    [60_000, '1m 00s'],
    [125_000, '2m 05s'],
    [3_599_999, '59m 59s'],
    [3_600_000, '1h 00m'],
    [11_040_000, '3h 04m'],
    [-1500, '-1.50 s'],
  ])('formats %s ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text)
  })

  it('never rounds up into the next unit: under a second stays in ms, under a minute in seconds', () => {
    // Truncated as a clock is, at every unit: 59,999 ms is not "60.00 s" (a minute) and 999.6 ms not "1000 ms".
    for (const ms of [999, 999.4, 999.6, 999.99, 59_995, 59_999, 59_999.99, 3_599_999.9]) {
      const text = formatDuration(ms)
      expect(text, `${ms} ms`).not.toMatch(/^(1000 ms|60\.00 s|60m)/)
    }
  })

  it('shows a dash for a running call (no latency)', () => {
    expect(formatDuration(null)).toBe('—')
    expect(formatDuration(undefined)).toBe('—')
    expect(formatDuration(Number.NaN)).toBe('—')
  })
})

describe('formatTotal', () => {
  it('shows a total capped at the limit of calls/query_stats with a plus', () => {
    expect(formatTotal({ count: 10_000, has_more: true })).toBe('10,000+')
    expect(formatTotal({ count: 10_000, has_more: false })).toBe('10,000')
    expect(formatTotal({ count: 1234 })).toBe('1,234')
  })
})

describe('plural and formatCountOf', () => {
  it('names one of a thing in the singular and any other count in the plural', () => {
    expect(formatCountOf(1, 'trace')).toBe('1 trace')
    expect(formatCountOf(0, 'call')).toBe('0 calls')
    expect(formatCountOf(2, 'call')).toBe('2 calls')
    expect(formatCountOf(12_345, 'call')).toBe('12,345 calls')
    expect(formatCountOf(1, 'entry', 'entries')).toBe('1 entry')
    expect(plural(3, 'entry', 'entries')).toBe('entries')
  })
})

describe('formatCount and formatTokens', () => {
  it('groups thousands and keeps the exact value', () => {
    expect(formatCount(0)).toBe('0')
    expect(formatCount(999)).toBe('999')
    expect(formatCount(1000)).toBe('1,000')
    expect(formatTokens(1_234_567)).toBe('1,234,567')
    expect(formatCount(-12_345)).toBe('-12,345')
    expect(formatCount(1234.5)).toBe('1,234.5')
    expect(formatTokens(null)).toBe('—')
  })

  it('writes the digits of counts from 1e21 up, never exponent notation', () => {
    expect(formatCount(1e22)).toBe('10,000,000,000,000,000,000,000')
    expect(formatCount(-1e21)).toBe('-1,000,000,000,000,000,000,000')
    expect(formatCount(1.2345e25)).toBe('12,345,000,000,000,000,000,000,000')
    expect(formatCount(999_999_999_999_999_900_000)).toBe('999,999,999,999,999,900,000')
    expect(formatTokens(2 ** 53)).toBe('9,007,199,254,740,992')
  })
})

describe('formatNumber and formatCost', () => {
  it('keeps six significant digits without exponent notation', () => {
    expect(formatNumber(0)).toBe('0')
    expect(formatNumber(0.000123456789)).toBe('0.000123457')
    expect(formatNumber(1234.5678)).toBe('1234.57')
    expect(formatNumber(1.5)).toBe('1.5')
    expect(formatNumber(42)).toBe('42')
    expect(formatNumber(1e-7)).toBe('0.0000001')
    expect(formatNumber(-0.25)).toBe('-0.25')
    expect(formatNumber(1e-12)).toBe('0.000000000001')
    expect(formatNumber(1.23456e20)).toBe('123456000000000000000')
  })

  it('writes magnitudes whose digits would not fit in exponent notation', () => {
    // A feedback total of 1e300 was 301 digits wide, and 1e-300 read "0"
    expect(formatNumber(1e300)).toBe('1e+300')
    expect(formatNumber(1e-300)).toBe('1e-300')
    expect(formatNumber(-1.234567e-13)).toBe('-1.23457e-13')
    expect(formatNumber(1e22)).toBe('1e+22')
    expect(formatNumber(Number.MAX_VALUE)).toBe('1.79769e+308')
    expect(formatNumber(Number.MIN_VALUE)).toBe('4.94066e-324')
    expect(formatCost(1.5e21)).toBe('$1.5e+21')
  })

  it('formats costs in dollars and shows a dash when the API has no price', () => {
    expect(formatCost(0)).toBe('$0')
    expect(formatCost(0.00015)).toBe('$0.00015')
    expect(formatCost(12.5)).toBe('$12.5')
    expect(formatCost(-0.5)).toBe('-$0.5')
    expect(formatCost(null)).toBe('—')
  })

  it('formats shares as percentages', () => {
    expect(formatPercent(0.5)).toBe('50.0%')
    expect(formatPercent(1 / 3)).toBe('33.3%')
    expect(formatPercent(null)).toBe('—')
  })
})

describe('formatDate', () => {
  it('formats ISO timestamps (with microseconds) in the given time zone', () => {
    expect(formatDate('2025-03-04T05:06:07.123456Z', 'UTC')).toBe('2025-03-04 05:06:07')
    expect(formatDate('2025-03-04T23:30:00Z', 'Asia/Tokyo')).toBe('2025-03-05 08:30:00')
    expect(formatDate(Date.UTC(2025, 0, 1, 0, 0, 0), 'UTC')).toBe('2025-01-01 00:00:00')
  })

  it('uses 00, not 24, for midnight', () => {
    expect(formatDate('2025-01-01T00:00:00Z', 'UTC')).toBe('2025-01-01 00:00:00')
  })

  it('shows a dash for no date and the raw text for an unparseable one', () => {
    expect(formatDate(null)).toBe('—')
    expect(formatDate('')).toBe('—')
    expect(formatDate('not a date', 'UTC')).toBe('not a date')
  })

  it('names the time zone a timestamp is shown in', () => {
    expect(formatDateIn('2025-03-04T23:30:00Z', 'Asia/Tokyo')).toBe('2025-03-05 08:30:00 (Asia/Tokyo)')
    expect(formatDateIn('2025-03-04T23:30:00Z', 'UTC')).toBe('2025-03-04 23:30:00 (UTC)')
    expect(formatDateIn(null, 'UTC')).toBe('—')
  })

  it('measures durations between ISO timestamps', () => {
    expect(durationBetween('2025-01-01T00:00:00Z', '2025-01-01T00:00:01.5Z')).toBe(1500)
    expect(durationBetween('2025-01-01T00:00:00Z', null)).toBeNull()
  })
})
