import { describe, expect, it } from 'vitest'
import { jsonValueText } from '#shared/tracing/clickhouse-json'

describe('jsonValueText', () => {
  it('reads a missing path as empty and a string unquoted', () => {
    expect(jsonValueText(undefined, false)).toBe('')
    expect(jsonValueText('a "quoted" é', true)).toBe('a "quoted" é')
  })

  it('prints scalars as ClickHouse does: integers as digits, floats as std::to_chars, null and booleans as words', () => {
    const texts = [10, -3, 0, 1.5, 0.001, 0.0001, 123456.7, 1e20, 1e21, 2.5e-7, -0.25].map((n) =>
      jsonValueText(n, true),
    )
    expect(texts).toEqual(['10', '-3', '0', '1.5', '0.001', '1e-04', '123456.7', '1e+20', '1e+21', '2.5e-07', '-0.25'])
    expect([null, true, false].map((v) => jsonValueText(v, true))).toEqual(['null', 'true', 'false'])
  })

  it('prints objects and arrays as minified JSON in stored key order', () => {
    const value = { z: [1, 0.0001, null], a: { s: 'tab\there "q" é', b: false } }
    expect(jsonValueText(value, true)).toBe('{"z":[1,1e-04,null],"a":{"s":"tab\\there \\"q\\" é","b":false}}')
    expect(jsonValueText([], true)).toBe('[]')
    expect(jsonValueText({}, true)).toBe('{}')
  })
})
