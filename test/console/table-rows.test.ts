import { describe, expect, it } from 'vitest'
import { TableQueryReqSchema } from '#shared/schemas/table'
import {
  columnsOf,
  compactValue,
  MAX_COLUMNS,
  PREVIEW_CHARS,
  TABLE_PAGE_SIZE,
  tableRowsRequest,
} from '../../console/src/lib/table-rows.js'

describe('columnsOf', () => {
  it("is the union of the rows' keys in the order first seen", () => {
    expect(columnsOf([{ q: 1, a: 2 }, { a: 3, tags: [] }, {}, { extra: null }])).toEqual(['q', 'a', 'tags', 'extra'])
  })

  it('skips rows that are not objects and stops at the column cap', () => {
    const wide = Object.fromEntries(Array.from({ length: MAX_COLUMNS + 5 }, (_, i) => [`k${i}`, i]))
    expect(columnsOf([null, 'text', [1, 2], { a: 1 }])).toEqual(['a'])
    expect(columnsOf([wide])).toHaveLength(MAX_COLUMNS)
    expect(columnsOf([{ a: 1, b: 2, c: 3 }], 2)).toEqual(['a', 'b'])
  })
})

describe('compactValue', () => {
  it('shows scalars as text, objects and lists as compact JSON, a missing key as nothing', () => {
    expect(['text', 1.5, true, null, { a: [1, { b: 'x' }] }, undefined].map((v) => compactValue(v))).toEqual([
      'text',
      '1.5',
      'true',
      'null',
      '{"a":[1,{"b":"x"}]}',
      '',
    ])
  })

  it('keeps a value on one line and cuts a long one with an ellipsis', () => {
    expect(compactValue('two\nlines\t here')).toBe('two lines here')
    const long = compactValue('x'.repeat(PREVIEW_CHARS + 10))
    expect(long).toBe(`${'x'.repeat(PREVIEW_CHARS)}…`)
    expect(compactValue({ note: 'abcdef' }, 5)).toBe('{"not…')
  })
})

describe('tableRowsRequest', () => {
  it('asks table/query for one page of the table, as the API reads it', () => {
    // Act
    const body = tableRowsRequest('acme/bot', 'abc', { offset: 50, limit: TABLE_PAGE_SIZE })

    // Assess
    expect(body).toEqual({ project_id: 'acme/bot', digest: 'abc', offset: 50, limit: 50 })
    expect(TableQueryReqSchema.parse(body)).toMatchObject(body)
  })
})
