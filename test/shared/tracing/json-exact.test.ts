import { describe, expect, it } from 'vitest'
import { pythonDumps } from '#shared/tracing/digest'
import { exactPart, parseJsonExact } from '#shared/tracing/json-exact'

describe('parseJsonExact', () => {
  it('keeps whole floats and big integers as Python prints them', () => {
    const text = '{"a": 1.0, "b": 12345678901234567890, "c": 1e5, "d": -0.0, "e": 2.5e-7, "f": [0.0, 3]}'
    expect(pythonDumps(parseJsonExact(text))).toBe(
      '{"a": 1.0, "b": 12345678901234567890, "c": 100000.0, "d": -0.0, "e": 2.5e-07, "f": [0.0, 3]}',
    )
  })

  it('parses everything else as JSON.parse does', () => {
    const text = ' {"s": "x\\u00e9\\n", "t": true, "n": null, "o": {}, "l": [], "__proto__": 1, "k": -12.5} '
    expect(JSON.stringify(parseJsonExact(text))).toBe(JSON.stringify(JSON.parse(text)))
  })

  it('rejects invalid JSON and reads parts by path', () => {
    expect(() => parseJsonExact('{"a": 1,}')).toThrow(SyntaxError)
    expect(() => parseJsonExact('[1] 2')).toThrow(SyntaxError)
    expect(pythonDumps(exactPart('{"obj": {"val": {"x": 2.0}}}', ['obj', 'val']))).toBe('{"x": 2.0}')
    expect(exactPart('{"obj": {}}', ['obj', 'val'])).toBeUndefined()
    expect(exactPart(undefined, ['obj'])).toBeUndefined()
  })
})
