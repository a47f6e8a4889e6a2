import { describe, expect, it } from 'vitest'
import { pythonDumps } from '#shared/tracing/digest'
import {
  exactPart,
  jsonExact,
  PyFloat,
  PyInt,
  parseJsonExact,
  parseStoredJson,
  stringifyJsonExact,
} from '#shared/tracing/json-exact'

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

describe('jsonExact', () => {
  it('writes whole floats as Python json.dumps does and big integers with all their digits', () => {
    // Prepare: Python's json.dumps prints these floats 1.0, -0.0, 1e+20, 1e+16, 1000000000000000.0 and 1e-07.
    const value = parseJsonExact(
      '{"a": 1.0, "b": 12345678901234567891, "c": 1e20, "d": -0.0, "e": 1e-7, "f": [0.0, 3, "x"], "g": 1e16, "h": 1e15}',
    )

    // Act
    const out = jsonExact(value)

    // Assess: JSON.stringify's layout; 1e-7 is no wrapper (JavaScript keeps its value, written 1e-7, read alike).
    expect(out).toEqual({
      text: '{"a":1.0,"b":12345678901234567891,"c":1e+20,"d":-0.0,"e":1e-7,"f":[0.0,3,"x"],"g":1e+16,"h":1000000000000000.0}',
      exact: true,
    })
    expect(pythonDumps(parseJsonExact(out.text))).toBe(pythonDumps(value))
  })

  it('is JSON.stringify for a value without wrappers, and leaves JSON.stringify of wrappers alone', () => {
    // Prepare
    const value = { s: 'pyexact0 "pyexact1"', n: [1, 2.5, -3e-9, null, true], o: { k: 'é\n' } }

    // Act
    const out = jsonExact(value)

    // Assess
    expect(out).toEqual({ text: JSON.stringify(value), exact: false })
    expect(stringifyJsonExact(value)).toBe(JSON.stringify(value))
    expect(JSON.stringify([new PyFloat(1), new PyInt('12345678901234567891')])).toBe('[1,12345678901234567000]')
  })

  it('never rewrites a user string beside the wrappers', () => {
    // Prepare: strings shaped like numbers or like a placeholder without this process's nonce.
    const value = { a: new PyFloat(2), b: '1.0', c: 'pyexact00', d: ['"pyexact1"', new PyInt('-98765432109876543210')] }

    // Act
    const text = stringifyJsonExact(value)

    // Assess
    expect(text).toBe('{"a":2.0,"b":"1.0","c":"pyexact00","d":["\\"pyexact1\\"",-98765432109876543210]}')
  })

  it('parses stored text exactly only when flagged', () => {
    const text = '{"a":1.0,"b":12345678901234567891}'
    expect(stringifyJsonExact(parseStoredJson(text, true))).toBe(text)
    expect(parseStoredJson(text, false)).toEqual({ a: 1, b: Number('12345678901234567891') })
  })
})
