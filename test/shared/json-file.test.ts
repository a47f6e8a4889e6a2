import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { JsonSyntaxError, jsonSyntaxErrorAt, parseJsonFile } from '#shared/json-file'

// A key pasted where a reference belongs: Node 20's JSON.parse message would quote `sk-live-01`.
const KEY = 'sk-live-0123456789abcdef'

describe('parseJsonFile', () => {
  it('parses valid JSON as JSON.parse does', () => {
    // Act
    const parsed = parseJsonFile('[{"a": [1, -2.5e3, true, null, "x\\u00e9"]}, {}]', 'models.json')

    // Assess
    expect(parsed).toEqual([{ a: [1, -2500, true, null, 'xé'] }, {}])
  })

  it('reports a syntax error by line and column, with none of the text and without the parse error as cause', () => {
    // Prepare
    const text = `[{"id": "org/m",\n  "apiKeyRef": ${KEY}}]`

    // Act
    let error: unknown
    try {
      parseJsonFile(text, 'models.json')
    } catch (caught) {
      error = caught
    }

    // Assess
    expect(error).toBeInstanceOf(JsonSyntaxError)
    expect(error).toBeInstanceOf(SyntaxError)
    expect((error as Error).message).toBe('models.json is not valid JSON (line 2, column 16)')
    expect((error as Error).cause).toBeUndefined()
    expect(inspect(error, { depth: 8 })).not.toContain('sk-live')
  })

  it('finds the first syntax error where JSON.parse finds one, and none in valid JSON', () => {
    // Prepare
    const cases: [string, number][] = [
      ['', 0],
      ['[{"id": ', 8],
      ['{"a": 1,}', 8],
      ['[1 2]', 3],
      ['{"a" 1}', 5],
      ['{a: 1}', 1],
      ['[01]', 2],
      ['"a\u0001"', 0],
      ['"\\x"', 0],
      ['{"a": tru}', 6],
      ['[] []', 3],
      ['\ufeff{}', 0],
      ['['.repeat(100_000), 100_000],
    ]
    const valid = ['0', ' {"a": [], "b": {}, "c": "\\"\\/\\b\\f\\n\\r\\t\\u0041"} ', '[-0.5E+2, 1e-2]', 'null']

    // Act
    const found = cases.map(([text]) => jsonSyntaxErrorAt(text))

    // Assess
    expect(found).toEqual(cases.map(([, at]) => at))
    for (const [text] of cases) expect(() => JSON.parse(text)).toThrow(SyntaxError)
    for (const text of valid) expect(jsonSyntaxErrorAt(text)).toBe(-1)
  })
})
