import { describe, expect, it } from 'vitest'
import { parseRequestDatetime } from '#shared/tracing/request-datetime'
import { parseDatetimeMicros, renderDatetime, storedToMicros, toStoredDatetime, utcMillis } from '#shared/tracing/time'

describe('tracing datetimes', () => {
  it.each([
    ['2025-01-01T00:00:00Z', '2025-01-01T00:00:00.000000Z'],
    ['2025-01-01T00:00:00', '2025-01-01T00:00:00.000000Z'],
    ['2025-01-01T02:30:00.123456+02:30', '2025-01-01T00:00:00.123456Z'],
    ['2025-01-01 00:00:00.5-01:00', '2025-01-01T01:00:00.500000Z'],
    ['2025-01-01', '2025-01-01T00:00:00.000000Z'],
    [1735689600.25, '2025-01-01T00:00:00.250000Z'],
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000000Z'],
    ['0099-12-31T23:59:59.5', '0099-12-31T23:59:59.500000Z'],
    ['0100-01-01T00:30:00+01:00', '0099-12-31T23:30:00.000000Z'],
  ])('stores %j as %s (naive means UTC)', (input, stored) => {
    expect(toStoredDatetime(input)).toBe(stored)
  })

  it.each([['yesterday'], ['2025-13-01T00:00:00Z'], [null], [{}]])('rejects %j', (input) => {
    expect(parseDatetimeMicros(input)).toBeUndefined()
  })

  it('keeps years 0..99 as given (Date.UTC would read them as 1900..1999)', () => {
    expect(utcMillis(50, 1, 1)).toBe(Date.parse('0050-01-01T00:00:00Z'))
    expect(utcMillis(0, 3, 1, 12, 30, 15)).toBe(Date.parse('0000-03-01T12:30:15Z'))
    expect(parseDatetimeMicros('0001-01-01T00:00:00Z')).toBe(Date.parse('0001-01-01T00:00:00Z') * 1000)
  })

  // Expected values are pydantic 2.13's (TypeAdapter(datetime).validate_json).
  it.each([
    [1_700_000_000, '2023-11-14T22:13:20.000000Z'],
    [20_000_000_000, '2603-10-11T11:33:20.000000Z'],
    [20_000_000_001, '1970-08-20T11:33:20.001000Z'],
    [-20_000_000_000, '1336-03-23T12:26:40.000000Z'],
    [-20_000_000_001, '1969-05-14T12:26:39.999000Z'],
    [30_000_000_000, '1970-12-14T05:20:00.000000Z'],
    [1.7e12, '2023-11-14T22:13:20.000000Z'],
    [1_700_000_000_123.5, '2023-11-14T22:13:20.123500Z'],
    [1e13 + 10, '2286-11-20T17:46:40.010000Z'],
    [-1e12, '1938-04-24T22:13:20.000000Z'],
    [253_402_300_799_999, '9999-12-31T23:59:59.999000Z'],
    [-62_135_596_800_000, '0001-01-01T00:00:00.000000Z'],
  ])('reads the request number %d as pydantic does (milliseconds above 2e10)', (input, stored) => {
    expect(toStoredDatetime(input)).toBe(stored)
  })

  it.each([
    [253_402_300_800_000, 'dates after 9999 are not supported as unix timestamps'],
    [1e16, 'dates after 9999 are not supported as unix timestamps'],
    [Number.POSITIVE_INFINITY, 'dates after 9999 are not supported as unix timestamps'],
    [-62_167_219_200_001, 'dates before 0000 are not supported as unix timestamps'],
    [-1e300, 'dates before 0000 are not supported as unix timestamps'],
    [-62_135_596_801_000, 'year 0 is out of range'],
    ['0000-06-01T00:00:00Z', 'year 0 is out of range'],
  ])("rejects the request datetime %s with pydantic's reason", (input, reason) => {
    expect(parseRequestDatetime(input)).toEqual({ ok: false, type: 'datetime_parsing', reason })
    expect(toStoredDatetime(input)).toBeUndefined()
  })

  it('reads query literals as epoch seconds, as ClickHouse does', () => {
    expect(parseDatetimeMicros(30_000_000_000)).toBe(30_000_000_000 * 1e6)
    expect(parseDatetimeMicros(1e13)).toBeUndefined()
  })

  it('renders like pydantic and round-trips microseconds', () => {
    expect(renderDatetime('2025-01-01T00:00:00.000000Z')).toBe('2025-01-01T00:00:00Z')
    expect(renderDatetime('2025-01-01T00:00:00.000500Z')).toBe('2025-01-01T00:00:00.000500Z')
    expect(storedToMicros('2025-01-01T00:00:00.000500Z')).toBe(Date.UTC(2025, 0, 1) * 1000 + 500)
  })
})
