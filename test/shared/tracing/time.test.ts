import { describe, expect, it } from 'vitest'
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

  it('renders like pydantic and round-trips microseconds', () => {
    expect(renderDatetime('2025-01-01T00:00:00.000000Z')).toBe('2025-01-01T00:00:00Z')
    expect(renderDatetime('2025-01-01T00:00:00.000500Z')).toBe('2025-01-01T00:00:00.000500Z')
    expect(storedToMicros('2025-01-01T00:00:00.000500Z')).toBe(Date.UTC(2025, 0, 1) * 1000 + 500)
  })
})
