import { describe, expect, it } from 'vitest'
import { callRef, parseWeaveRef, tableRef, tableRefsOf } from '../../console/src/lib/refs.js'

describe('parseWeaveRef', () => {
  it('splits a ref into its project, kind and the rest', () => {
    expect(parseWeaveRef('weave:///acme/bot/call/c1')).toEqual({ project: 'acme/bot', kind: 'call', rest: 'c1' })
    expect(parseWeaveRef('weave:///acme/bot/object/settings:abc123')).toEqual({
      project: 'acme/bot',
      kind: 'object',
      rest: 'settings:abc123',
    })
  })

  it.each([
    ['a plain string', 'call c1'],
    ['a ref without a kind', 'weave:///acme/bot'],
    ['a ref with no rest', 'weave:///acme/bot/call/'],
    ['another scheme', 'https://acme/bot/call/c1'],
    ['two slashes', 'weave://acme/bot/call/c1'],
  ])('reads %s as no ref', (_, text) => {
    expect(parseWeaveRef(text)).toBeUndefined()
  })
})

describe('callRef', () => {
  it('reads the project and id of a call ref', () => {
    expect(callRef('weave:///acme/my bot/call/019a-42')).toEqual({ project: 'acme/my bot', callId: '019a-42' })
  })

  it('reads an object, op or table ref, a deeper call path and no ref as no call', () => {
    const refs = [
      'weave:///acme/bot/object/settings:abc',
      'weave:///acme/bot/op/judge:abc',
      'weave:///acme/bot/table/abc',
      'weave:///acme/bot/call/c1/attr/output',
      '',
      null,
      undefined,
    ]
    expect(refs.map(callRef)).toEqual(refs.map(() => undefined))
  })
})

describe('tableRef and tableRefsOf', () => {
  const ROWS = 'weave:///acme/bot/table/5f1e'

  it("finds a Weave Dataset's rows at the top level of its value", () => {
    // Prepare: a Dataset as the Python SDK publishes it
    const dataset = { _type: 'Dataset', _class_name: 'Dataset', name: 'questions', description: null, rows: ROWS }

    // Act
    const refs = tableRefsOf(dataset)

    // Assess
    expect(refs).toEqual([{ key: 'rows', project: 'acme/bot', digest: '5f1e' }])
  })

  it("keeps the value's key order, and takes a value that is itself a table ref", () => {
    expect(tableRefsOf({ b: 'weave:///e/p/table/2', a: 'weave:///e/q/table/1' }).map((r) => r.key)).toEqual(['b', 'a'])
    expect(tableRefsOf(ROWS)).toEqual([{ key: '', project: 'acme/bot', digest: '5f1e' }])
  })

  it('ignores other refs, nested tables, lists and scalars', () => {
    expect(tableRefsOf({ op: 'weave:///e/p/op/f:1', nested: { rows: ROWS }, list: [ROWS], n: 1 })).toEqual([])
    expect([null, 3, [ROWS], 'weave:///e/p/table/a/b'].map(tableRefsOf)).toEqual([[], [], [], []])
    expect(tableRef(42)).toBeUndefined()
  })
})
