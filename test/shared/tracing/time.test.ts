import { describe, expect, it } from 'vitest'
import { parseDatetimeMicros, renderDatetime, storedToMicros, toStoredDatetime } from '#shared/tracing/time'

describe('tracing datetimes', () => {
  it.each([
    ['2025-01-01T00:00:00Z', '2025-01-01T00:00:00.000000Z'],
    ['2025-01-01T00:00:00', '2025-01-01T00:00:00.000000Z'],
    ['2025-01-01T02:30:00.123456+02:30', '2025-01-01T00:00:00.123456Z'],
    ['2025-01-01 00:00:00.5-01:00', '2025-01-01T01:00:00.500000Z'],
    ['2025-01-01', '2025-01-01T00:00:00.000000Z'],
    [1735689600.25, '2025-01-01T00:00:00.250000Z'],
  ])('stores %j as %s (naive means UTC)', (input, stored) => {
    expect(toStoredDatetime(input)).toBe(stored)
  })

  it.each([['yesterday'], ['2025-13-01T00:00:00Z'], [null], [{}]])('rejects %j', (input) => {
    expect(parseDatetimeMicros(input)).toBeUndefined()
  })

  it('renders like pydantic and round-trips microseconds', () => {
    expect(renderDatetime('2025-01-01T00:00:00.000000Z')).toBe('2025-01-01T00:00:00Z')
    expect(renderDatetime('2025-01-01T00:00:00.000500Z')).toBe('2025-01-01T00:00:00.000500Z')
    expect(storedToMicros('2025-01-01T00:00:00.000500Z')).toBe(Date.UTC(2025, 0, 1) * 1000 + 500)
  })
})
