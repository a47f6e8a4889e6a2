import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  bytesDigest,
  isContentHash,
  pythonDumps,
  pythonDumpsInOrder,
  tableDigest,
  valDigest,
} from '#shared/tracing/digest'

describe('weave digests', () => {
  it('matches the contract reference object digests', () => {
    expect(valDigest({ b: 1, a: 'x' })).toBe('OFgg8Alv1Vj0CRMZ5Yp0LOv4d9w7rKGAmBiJ8cQOyoQ')
    expect(valDigest({ v: 0 })).toBe('UAVY48kKl3eXtcWIilU664ewzrBtYYiiwTbRUQHenPg')
    expect(valDigest({ v: 1 })).toBe('mrIlP8OJgfWXnCXPCjS2LN8zRlI0S97xaz1dvAt08vE')
    expect(valDigest({ data: 'test' })).toBe('pJmtiGOXV1HNNQm9jGko35zeJIrc3GBPmFYQ0iiLJGI')
    expect(valDigest({ name: 'é' })).toBe('nRJbovEGhGO35QAy2PFBu7pw2UFncXzwNS69GQ1onV8')
  })

  it('matches the contract reference bytes, row and table digests', () => {
    expect(bytesDigest('hello')).toBe('LPJNulXwow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ')
    const rows = [valDigest({ x: 1 }), valDigest({ x: 2 })]
    expect(rows).toEqual(['YTYlqmU0Pbsbmr5qusZ3P1yRvWDT8vX34urmnh24sic', 'JPVyYA4VDTIwE4OFqgAGyhuZO0a7Qn90bMaQyY2TJBM'])
    expect(tableDigest(rows)).toBe('ed8bd1f8cb829eeb6b3fef95a7cd8401f7e5af825c4c9aa144a1ceb9f32c3654')
  })

  it('serialises like Python json.dumps(sort_keys=True, ensure_ascii=True)', () => {
    expect(pythonDumps({ z: [1, 0.5, null, true], a: 'q"\n\u007f😀' })).toBe(
      '{"a": "q\\"\\n\\u007f\\ud83d\\ude00", "z": [1, 0.5, null, true]}',
    )
    expect(pythonDumps([1e-5, 1e16, 0.1, 1.5e300, 123.456, -0.0001, 1e-7, 2 ** 60])).toBe(
      '[1e-05, 1e+16, 0.1, 1.5e+300, 123.456, -0.0001, 1e-07, 1.152921504606847e+18]',
    )
  })

  it('escapes any string as json.dumps(ensure_ascii=True) does, one UTF-16 unit at a time', () => {
    // Python's `py_encode_basestring_ascii`: the short escapes, else printable ASCII as is, else `\uXXXX` per unit.
    const short: Record<string, string> = {
      '"': '\\"',
      '\\': '\\\\',
      '\n': '\\n',
      '\r': '\\r',
      '\t': '\\t',
      '\b': '\\b',
      '\f': '\\f',
    }
    const reference = (text: string) =>
      `"${Array.from({ length: text.length }, (_, i) => {
        const unit = text[i] as string
        const code = text.charCodeAt(i)
        return short[unit] ?? (code >= 0x20 && code <= 0x7e ? unit : `\\u${code.toString(16).padStart(4, '0')}`)
      }).join('')}"`
    const units = fc.oneof(
      fc.string({ unit: 'grapheme-ascii' }),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u007f', 'é', '\ud83d', '\ude00', 'a') }),
    )
    fc.assert(
      fc.property(units, (text) => {
        expect(pythonDumps(text)).toBe(reference(text))
        expect(pythonDumps({ [text]: text })).toBe(`{${reference(text)}: ${reference(text)}}`)
      }),
      { numRuns: 2_000 },
    )
    // Long strings, escaped or copied whole.
    for (const text of ['x'.repeat(100_000), 'é'.repeat(50_000), 'a"b\\c\n'.repeat(20_000)]) {
      expect(pythonDumps(text)).toBe(reference(text))
    }
  })

  it('sorts keys by code point as Python does, characters beyond U+FFFF after those from U+E000 (QA)', () => {
    // Expected text from Python 3: json.dumps({...}, sort_keys=True); JavaScript's sort() put '😀' before '！'.
    const value = { '！': 1, '😀': 2, a: 3, '\ue000x': 4, '\ud83d': 5 }
    expect(pythonDumps(value)).toBe('{"a": 3, "\\ud83d": 5, "\\ue000x": 4, "\\uff01": 1, "\\ud83d\\ude00": 2}')
  })

  it('serialises like Python json.dumps() with the keys in their own order', () => {
    expect(pythonDumpsInOrder({ z: [1, { y: 0.5, b: null }], a: 'é' })).toBe(
      '{"z": [1, {"y": 0.5, "b": null}], "a": "\\u00e9"}',
    )
  })

  it('recognises content hashes', () => {
    expect(isContentHash('OFgg8Alv1Vj0CRMZ5Yp0LOv4d9w7rKGAmBiJ8cQOyoQ')).toBe(true)
    expect(isContentHash('ed8bd1f8cb829eeb6b3fef95a7cd8401f7e5af825c4c9aa144a1ceb9f32c3654')).toBe(true)
    expect(isContentHash('my-alias')).toBe(false)
    expect(isContentHash('latest')).toBe(false)
  })
})
