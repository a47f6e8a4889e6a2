import { describe, expect, it } from 'vitest'
import { integerOfText, quoteInt64Numbers } from '#shared/otel/otlp-json-int64'

describe('quoteInt64Numbers', () => {
  it('quotes the 64-bit members a double may not hold, in both spellings and with JSON whitespace', () => {
    // Prepare
    const text =
      '{"startTimeUnixNano":1700000000000000001,"end_time_unix_nano" :\n 1.7e18 ,' +
      '"events":[{"timeUnixNano":9007199254740993},{"time_unix_nano":2.0}],' +
      '"value":{"intValue":-9223372036854775808},"other":{"int_value":1e3}}'

    // Act
    const quoted = quoteInt64Numbers(text)

    // Assess
    expect(quoted).toBe(
      '{"startTimeUnixNano":"1700000000000000001","end_time_unix_nano" :\n "1.7e18" ,' +
        '"events":[{"timeUnixNano":"9007199254740993"},{"time_unix_nano":"2.0"}],' +
        '"value":{"intValue":"-9223372036854775808"},"other":{"int_value":"1e3"}}',
    )
  })

  it('returns text unchanged when no such member is a number: strings, short integers, other keys', () => {
    // Prepare: what exporters send (strings; the JS exporter's small intValues), and 64-bit digits elsewhere
    const texts = [
      '{"startTimeUnixNano":"1700000000000000001","endTimeUnixNano":"1700000000000000002"}',
      '{"intValue":180,"int_value":-45,"timeUnixNano":0}',
      '{"doubleValue":1700000000000000001,"flags":1.5e3,"startTimeUnixNanos":1700000000000000001}',
    ]

    // Act
    const quoted = texts.map(quoteInt64Numbers)

    // Assess
    expect(quoted).toEqual(texts)
  })

  it('leaves text inside a string alone, escaped quotes included', () => {
    // Prepare: a string value holding what would be a member outside a string
    const text = JSON.stringify({
      stringValue: '{"intValue": 9007199254740993, "startTimeUnixNano": 1.7e18}',
      key: 'a "timeUnixNano":1700000000000000001, b',
    })

    // Act
    const quoted = quoteInt64Numbers(text)

    // Assess
    expect(quoted).toBe(text)
    expect(text).toContain('\\"intValue\\": 9007199254740993')
  })

  it('keeps text JSON refuses refused: no leading zeros, no partial numbers', () => {
    // Prepare
    const texts = ['{"intValue":00000000000000001}', '{"intValue":12345678901234567x}', '{"intValue":1.}']

    // Act
    const quoted = texts.map(quoteInt64Numbers)

    // Assess
    expect(quoted).toEqual(texts)
    for (const text of quoted) expect(() => JSON.parse(text)).toThrow()
  })
})

describe('integerOfText', () => {
  it('reads decimal text exactly, fraction of zeros and exponent included', () => {
    // Act
    const values = [
      '1700000000000000001',
      '-9223372036854775808',
      '1.7e18',
      '1.700000000000000001E+18',
      '2.000',
      '-0',
      '100e-2',
    ].map(integerOfText)

    // Assess
    expect(values).toEqual([
      1700000000000000001n,
      -9223372036854775808n,
      1700000000000000000n,
      1700000000000000001n,
      2n,
      0n,
      1n,
    ])
  })

  it('reads no integer from a fraction, text that is no number, or more than 20 digits, cheaply for huge exponents', () => {
    // Act
    const values = [
      '1.5',
      '1.234e2',
      '1e-5',
      ' 1',
      '+1',
      '0x10',
      '',
      '1e21',
      '123456789012345678901',
      '1e999999999',
    ].map(integerOfText)

    // Assess
    expect(values).toEqual(Array(10).fill(undefined))
  })
})
