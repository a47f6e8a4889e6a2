import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { scanJson } from '#shared/http/json-scan'
import { excessNesting } from '#shared/http/read-json'

const KEY = 'trajectory_groups'
const elementsOf = (text: string) => scanJson(text, 200, KEY).elements

describe('scanJson', () => {
  it('cuts each element of the root array member exactly as written, whitespace around it dropped', () => {
    // Prepare: integers beyond 2^53, `1.0`, `-0.0`, exponents and escapes that JSON.stringify would rewrite.
    const elements = [
      '{"metadata": {"snowflake_id": 1234567890123456789, "seed": 18446744073709551615}}',
      '{"reward":1.0,"x":-0.0,"y":1E+2,"s":"\\u00e9\\"],{[,\\\\"}',
      '[1, [2, {"a": [3]}], "]"]',
      '"a string, with a comma"',
      '123456789012345678901234567890',
      'true',
      'null',
    ]
    const text = `{"split": "val",\n  "${KEY}" : [\n    ${elements.join(' ,\n\t')}\r\n  ] , "model_id": "m"}`

    // Act
    const scan = scanJson(text, 200, KEY)

    // Assess
    expect(scan).toEqual({ tooDeep: -1, elements })
  })

  it('reads an empty array as no elements', () => {
    expect(elementsOf(`{"${KEY}":[]}`)).toEqual([])
    expect(elementsOf(`{"${KEY}": [ \n ] }`)).toEqual([])
  })

  it('matches the key only as a member of the root object, escapes decoded', () => {
    // A nested member of the same name, a string value equal to the key and a root array are not the member.
    expect(elementsOf(`{"a": {"${KEY}": [1]}, "b": "${KEY}", "c": [2]}`)).toBeUndefined()
    expect(elementsOf(`["${KEY}", [1, 2]]`)).toBeUndefined()
    expect(elementsOf(`{"${KEY}": {"0": 1}}`)).toBeUndefined()
    expect(elementsOf(`{"${KEY}": "[1, 2]"}`)).toBeUndefined()
    expect(elementsOf('{"trajectory\\u005fgroups": [1, 2]}')).toEqual(['1', '2'])
    expect(elementsOf(`{"${KEY}": [{"${KEY}": [9]}], "z": [3]}`)).toEqual([`{"${KEY}": [9]}`])
  })

  it('keeps the last of duplicate members, as JSON.parse does', () => {
    // Prepare
    const text = `{"${KEY}": [1, 2], "x": 0, "${KEY}": [{"b": 3}]}`

    // Act
    const elements = elementsOf(text)

    // Assess
    expect(elements).toEqual(['{"b": 3}'])
    expect((JSON.parse(text) as Record<string, unknown>)[KEY]).toEqual(elements?.map((e) => JSON.parse(e)))
  })

  it('finds excessive nesting as excessNesting does, elements or not', () => {
    // Prepare
    const deep = `{"${KEY}": [${'['.repeat(300)}${']'.repeat(300)}]}`

    // Act
    const scan = scanJson(deep, 200, KEY)

    // Assess
    expect(scan).toEqual({ tooDeep: `{"${KEY}": `.length + 199, elements: undefined })
    expect(excessNesting(deep)).toBe(scan.tooDeep)
    expect(scanJson('[[[]]]', 2)).toEqual({ tooDeep: 2, elements: undefined })
  })

  it('returns the exact text of every element of any valid JSON, however it is spaced (property)', () => {
    // Prepare: elements written compactly or indented, joined with arbitrary JSON whitespace, among other members
    // whose keys and strings hold brackets, commas and quotes.
    const space = fc.stringMatching(/^[ \t\r\n]{0,3}$/)
    const written = fc
      .tuple(fc.jsonValue(), fc.constantFrom(0, 1, 2), space, space)
      .map(([value, indent, before, after]) => ({ text: JSON.stringify(value, null, indent), before, after }))
    const other = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 })

    // Act and Assess
    fc.assert(
      fc.property(fc.array(written, { maxLength: 6 }), other, other, space, (elements, head, tail, pad) => {
        delete head[KEY]
        delete tail[KEY]
        const list = elements.map((e) => `${e.before}${e.text}${e.after}`).join(',')
        const members = [
          JSON.stringify(head).slice(1, -1),
          `"${KEY}"${pad}:${pad}[${list}]`,
          JSON.stringify(tail).slice(1, -1),
        ]
        const text = `{${members.filter((m) => m !== '').join(`,${pad}`)}}`
        JSON.parse(text)
        expect(elementsOf(text)).toEqual(elements.map((e) => e.text))
      }),
      { numRuns: 500 },
    )
  })
})
