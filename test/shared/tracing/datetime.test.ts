import { describe, expect, it } from 'vitest'
import { isoInZone, parseDateTimeMs, pydanticUtc } from '#shared/tracing/datetime'

describe('feedback datetimes', () => {
  it.each([
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00Z'],
    ['0099-12-31T23:59:59', '0099-12-31T23:59:59Z'],
    ['0001-06-01T00:00:00.25+00:00', '0001-06-01T00:00:00.250000Z'],
  ])('keeps the year of %s (Date.UTC would move it to 19xx)', (input, rendered) => {
    // Act
    const ms = parseDateTimeMs(input)

    // Assess
    expect(ms).toBe(Date.parse(input.length === 19 ? `${input}Z` : input))
    expect(pydanticUtc(ms as number)).toBe(rendered)
  })

  it('renders instants of years 0..999 with four-digit years and their real offset', () => {
    // Prepare
    const ms = Date.parse('0050-01-01T00:00:00Z')
    const yearZero = Date.parse('0000-06-01T00:00:00Z')

    // Act
    const utc = isoInZone(ms, 'UTC')
    const zero = isoInZone(yearZero, 'UTC')
    const fixed = isoInZone(Date.parse('0999-03-01T00:00:00Z'), 'Etc/GMT-2')

    // Assess
    expect(utc).toBe('0050-01-01T00:00:00+00:00')
    expect(zero).toBe('0000-06-01T00:00:00+00:00')
    expect(fixed).toBe('0999-03-01T02:00:00+02:00')
    expect(isoInZone(Date.parse('2024-01-01T00:00:00Z'), 'Asia/Kolkata')).toBe('2024-01-01T05:30:00+05:30')
  })
})
