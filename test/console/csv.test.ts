import { describe, expect, it } from 'vitest'
import { csvField, toCsv } from '../../console/src/lib/csv.js'

describe('csvField', () => {
  it('leaves plain values as they are', () => {
    expect(csvField('gpt-4o')).toBe('gpt-4o')
    expect(csvField(12)).toBe('12')
    expect(csvField(0.5)).toBe('0.5')
    expect(csvField(-1.5)).toBe('-1.5')
    expect(csvField(true)).toBe('true')
  })

  it('quotes commas, quotes and line breaks, doubling quotes', () => {
    expect(csvField('a,b')).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField('line1\nline2')).toBe('"line1\nline2"')
    expect(csvField('cr\rhere')).toBe('"cr\rhere"')
  })

  it('writes null and undefined as empty fields and objects as JSON', () => {
    expect(csvField(null)).toBe('')
    expect(csvField(undefined)).toBe('')
    expect(csvField({ a: 1 })).toBe('"{""a"":1}"')
  })

  it('defuses spreadsheet formulas', () => {
    expect(csvField('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`)
    expect(csvField('+1+1')).toBe("'+1+1")
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvField('-2+3')).toBe("'-2+3")
  })
})

describe('toCsv', () => {
  it('writes a header and CRLF-terminated rows', () => {
    const csv = toCsv(
      ['hour', 'model', 'cost'],
      [
        ['2025-01-01T00:00:00.000Z', 'a,b', 0.25],
        ['2025-01-01T01:00:00.000Z', 'm', null],
      ],
    )
    expect(csv).toBe('hour,model,cost\r\n2025-01-01T00:00:00.000Z,"a,b",0.25\r\n2025-01-01T01:00:00.000Z,m,\r\n')
  })
})
