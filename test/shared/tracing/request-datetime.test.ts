import { describe, expect, it } from 'vitest'
import { parseRequestDatetime } from '#shared/tracing/request-datetime'
import { toStoredDatetime } from '#shared/tracing/time'

// Every expected value below is pydantic's own (pydantic 2.13.4, pydantic-core 2.46.4):
// TypeAdapter(datetime).validate_json(json.dumps(value)), errors()[0]['type'] and ctx['error'], the result in UTC.
const DAY = 'day value is outside expected range'
const MONTH = 'month value is outside expected range of 1-12'
const EXTRA = 'unexpected extra characters at the end of the input'

describe('request datetimes (pydantic rules)', () => {
  it.each([
    ['2024-02-30T00:00:00Z', DAY],
    ['2023-02-29', DAY],
    ['2023-02-29T00:00:00', DAY],
    ['1900-02-29', DAY],
    ['2023-04-31T00:00:00', DAY],
    ['2023-01-00T00:00:00', DAY],
    ['2023-01-32T00:00:00', DAY],
    ['2023-13-01T00:00:00', MONTH],
    ['2023-00-01', MONTH],
    // A failure after a valid date is reported by pydantic's date fallback, which stops at the extra characters.
    ['2023-01-01T24:00:00', EXTRA],
    ['2023-01-01T25:00:00', EXTRA],
    ['2023-01-01T23:60:00', EXTRA],
    ['2023-12-31T23:59:60Z', EXTRA],
  ])('rejects the impossible calendar datetime %s', (input, reason) => {
    expect(parseRequestDatetime(input)).toEqual({ ok: false, type: 'datetime_from_date_parsing', reason })
    expect(toStoredDatetime(input)).toBeUndefined()
  })

  it.each([
    ['2024-02-29', '2024-02-29T00:00:00.000000Z'],
    ['2000-02-29T12:00:00Z', '2000-02-29T12:00:00.000000Z'],
    ['2024-01-01t00:00:00', '2024-01-01T00:00:00.000000Z'],
    ['2024-01-01_00:00:00', '2024-01-01T00:00:00.000000Z'],
    ['2024-01-01T00:00Z', '2024-01-01T00:00:00.000000Z'],
    ['2024-01-01T00:00:00+0100', '2023-12-31T23:00:00.000000Z'],
    ['2024-01-01T00:00:00\u22120130', '2024-01-01T01:30:00.000000Z'],
    ['2024-01-01T00:00:00+23:59', '2023-12-31T00:01:00.000000Z'],
    ['2024-01-01T00:00:00,5Z', '2024-01-01T00:00:00.500000Z'],
    ['2024-01-01T00:00:00.1234567891234Z', '2024-01-01T00:00:00.123456Z'],
    ['2300-01-01T00:00:00.000001Z', '2300-01-01T00:00:00.000001Z'],
    ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
  ])('accepts %s as %s', (input, stored) => {
    expect(toStoredDatetime(input)).toBe(stored)
  })

  it.each([
    ['1700000000', '2023-11-14T22:13:20.000000Z'],
    ['1700000000.5', '2023-11-14T22:13:20.500000Z'],
    ['-5', '1969-12-31T23:59:55.000000Z'],
    ['+5', '1970-01-01T00:00:05.000000Z'],
    ['.5', '1970-01-01T00:00:00.500000Z'],
    ['1.5e3', '1970-01-01T00:25:00.000000Z'],
    ['00001700000000', '2023-11-14T22:13:20.000000Z'],
    ['1700000000123', '2023-11-14T22:13:20.123000Z'],
    ['1700000000.123456789', '2023-11-14T22:13:20.123457Z'],
    // A numeric string with a '.' above 2e10 is divided by 1000, then its floor goes through the watershed again.
    ['30000000000000.0', '1970-12-14T05:20:00.000000Z'],
    ['30000000000000', '2920-08-30T05:20:00.000000Z'],
    ['1000000000000000.0', '2001-09-09T01:46:40.000000Z'],
  ])('reads the numeric string %j as a timestamp', (input, stored) => {
    expect(toStoredDatetime(input)).toBe(stored)
  })

  it.each([
    [' 1700000000', 'datetime_from_date_parsing', 'invalid character in year'],
    ['1700000000 ', 'datetime_from_date_parsing', 'invalid date separator, expected `-`'],
    ['1e10', 'datetime_from_date_parsing', 'input is too short'],
    ['1_700_000_000', 'datetime_from_date_parsing', 'invalid character in year'],
    ['17000000000000000000000', 'datetime_from_date_parsing', 'invalid date separator, expected `-`'],
    ['253402300800000', 'datetime_from_date_parsing', 'dates after 9999 are not supported as unix timestamps'],
    ['-62167219200001', 'datetime_from_date_parsing', 'dates before 0000 are not supported as unix timestamps'],
    ['-62135596801000', 'datetime_parsing', 'year 0 is out of range'],
  ])('rejects the numeric string %j as pydantic does', (input, type, reason) => {
    expect(parseRequestDatetime(input)).toEqual({ ok: false, type, reason })
  })

  it.each([
    ['yesterday', 'input is too short'],
    ['', 'input is too short'],
    ['2024-1-01', 'input is too short'],
    ['2024/01/01', 'invalid date separator, expected `-`'],
    ['20240101T000000Z', 'invalid date separator, expected `-`'],
    ['2024-0a-01', 'invalid character in month'],
    ['2024-01-0a', 'invalid character in day'],
    [' 2024-01-01T00:00:00Z', 'invalid character in year'],
    // speedate counts UTF-8 bytes: five two-byte characters are long enough to fail on the year instead.
    ['\u00e9\u00e9\u00e9\u00e9', 'input is too short'],
    ['\u00e9\u00e9\u00e9\u00e9\u00e9', 'invalid character in year'],
    ['2024-01-01T00:00:00+01', EXTRA],
    ['2024-01-01T00:00:00+24:00', EXTRA],
    ['2024-01-01T00:00:00-01:60', EXTRA],
    ['2024-01-01T00:00:00 Z', EXTRA],
    ['2024-01-01T00:00:00Z ', EXTRA],
    ['2024-01-01T00:00:00.Z', EXTRA],
    ['2024-01-01T', EXTRA],
    ['2024-01-01Z', EXTRA],
  ])('rejects the string %j with the reason pydantic gives', (input, reason) => {
    expect(parseRequestDatetime(input)).toEqual({ ok: false, type: 'datetime_from_date_parsing', reason })
  })

  it('reports year 0 as datetime_parsing for a datetime or a date', () => {
    const reason = 'year 0 is out of range'
    expect(parseRequestDatetime('0000-06-01T00:00:00Z')).toEqual({ ok: false, type: 'datetime_parsing', reason })
    expect(parseRequestDatetime('0000-06-01')).toEqual({ ok: false, type: 'datetime_parsing', reason })
    expect(toStoredDatetime('0001-01-01T00:00:00+01:00')).toBe('0000-12-31T23:00:00.000000Z')
  })

  it.each([
    [-1.25, '1969-12-31T23:59:58.250000Z'],
    [-0.0000005, '1969-12-31T23:59:59.000001Z'],
    [0.9999996, '1970-01-01T00:00:01.000000Z'],
    [20_000_000_000.5, '2603-10-11T11:33:20.000500Z'],
    [-20_000_000_000.5, '1969-05-14T12:26:39.999500Z'],
    [1_700_000_000_123.4568, '2023-11-14T22:13:20.123457Z'],
    [-1_700_000_000_123.4568, '1916-02-18T01:46:39.876457Z'],
    [-20_564_262_897.0425, '1969-05-07T23:42:17.102042Z'],
  ])('reads the JSON number %d as pydantic does (the fraction is added forwards)', (input, stored) => {
    expect(toStoredDatetime(input)).toBe(stored)
  })

  it.each([[true], [null], [[]], [{}]])('rejects %j as datetime_type', (input) => {
    expect(parseRequestDatetime(input)).toEqual({ ok: false, type: 'datetime_type' })
  })

  it('refuses, without a pydantic type, a datetime pydantic accepts but the store cannot hold (year 10000 in UTC)', () => {
    expect(parseRequestDatetime('9999-12-31T23:59:59-01:00')).toEqual({ ok: false })
  })
})
