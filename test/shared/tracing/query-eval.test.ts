import { describe, expect, it } from 'vitest'
import { parseQuery, withExactQuery } from '#shared/schemas/query'
import { parseJsonExact } from '#shared/tracing/json-exact'
import { evaluate } from '#shared/tracing/query-eval'
import type { Val } from '#shared/tracing/query-values'

// A row with JSON values (as ClickHouse reads JSON columns) and plain columns.
const row: Record<string, Val> = {
  'inputs.n': { t: 'json', raw: 7, present: true },
  'inputs.s': { t: 'json', raw: '7.5', present: true },
  'inputs.flag': { t: 'json', raw: true, present: true },
  'inputs.obj': { t: 'json', raw: { a: 1 }, present: true },
  'inputs.nul': { t: 'json', raw: null, present: true },
  'inputs.missing': { t: 'json', raw: undefined, present: false },
  'inputs.text': { t: 'json', raw: 'error: disk-full at /var', present: true },
  'inputs.f': { t: 'json', raw: 1.5, present: true },
  parent_id: { t: 'plain', v: null },
  op_name: { t: 'plain', v: 'op' },
}
const resolve = (path: string): Val => row[path] ?? { t: 'json', raw: undefined, present: false }
const get = (path: string) => ({ $getField: path })
const lit = (v: unknown) => ({ $literal: v })
const run = (expr: unknown) => evaluate(parseQuery({ $expr: expr }).expr, resolve)

describe('query evaluation (ClickHouse semantics)', () => {
  it.each([
    ['an int literal casts the JSON value to int', { $eq: [get('inputs.n'), lit(7)] }, true],
    ['a JSON "7.5" is NULL under an int cast', { $eq: [get('inputs.s'), lit(7)] }, null],
    ['a float literal casts to double', { $gt: [get('inputs.s'), lit(7.25)] }, true],
    ['a string literal compares text', { $eq: [get('inputs.s'), lit('7.5')] }, true],
    ['a boolean literal compares as 1/0', { $eq: [get('inputs.flag'), lit(true)] }, true],
    ['a non-scalar JSON value reads as an empty string', { $eq: [get('inputs.obj'), lit('')] }, true],
    ['a JSON null reads as an empty string', { $eq: [get('inputs.nul'), lit('')] }, true],
    ['IS NULL is false for JSON values (they are never NULL)', { $eq: [get('inputs.missing'), lit(null)] }, false],
    ['IS NULL on a NULL column', { $eq: [get('parent_id'), lit(null)] }, true],
    ['NOT of NULL is NULL', { $not: [{ $eq: [get('inputs.s'), lit(7)] }] }, null],
    ['AND with false is false even with NULL', { $and: [{ $eq: [get('inputs.s'), lit(7)] }, lit(false)] }, false],
    ['OR with true is true even with NULL', { $or: [{ $eq: [get('inputs.s'), lit(7)] }, lit(true)] }, true],
    ['$in with int and double literals casts to double', { $in: [get('inputs.s'), [lit(1), lit(7.5)]] }, true],
    ['$in with mixed kinds compares text', { $in: [get('inputs.n'), [lit('7'), lit(8)]] }, true],
    [
      '$convert exists is false for a missing key',
      { $eq: [{ $convert: { input: get('inputs.missing'), to: 'exists' } }, lit(false)] },
      true,
    ],
    [
      '$convert exists is true for a null value',
      { $eq: [{ $convert: { input: get('inputs.nul'), to: 'exists' } }, lit(true)] },
      true,
    ],
    [
      '$containsToken needs whole tokens',
      { $containsToken: { input: get('inputs.text'), substr: lit('disk-full') } },
      true,
    ],
    [
      '$containsToken rejects a token prefix',
      { $containsToken: { input: get('inputs.text'), substr: lit('dis') } },
      false,
    ],
    ['$contains is a substring test', { $contains: { input: get('inputs.text'), substr: lit('k-f') } }, true],
    [
      'a $convert is compared as converted, not cast by the int literal',
      { $gt: [{ $convert: { input: get('inputs.f'), to: 'double' } }, lit(1)] },
      true,
    ],
    [
      'a $convert in $in is not cast by the int list',
      { $in: [{ $convert: { input: get('inputs.f'), to: 'double' } }, [lit(1), lit(2)]] },
      false,
    ],
    ['a float literal is not cast by an int literal', { $gt: [lit(1.5), lit(1)] }, true],
  ])('%s', (_name, expr, expected) => {
    expect(run(expr)).toBe(expected)
  })

  it.each([
    ['1.0', true],
    ['1e0', true],
    ['-0.0e1', true],
    ['1', null],
  ])('reads a literal written %s from a body as pydantic does (float: double cast)', (literal, expected) => {
    // Prepare: `inputs.f` is 1.5, NULL under an int cast.
    const text = `{"project_id":"e/p","query":{"$expr":{"$gt":[{"$getField":"inputs.f"},{"$literal":${literal}}]}}}`
    const body = withExactQuery(JSON.parse(text), text) as { query: unknown }

    // Act
    const got = evaluate(parseQuery(body.query).expr, resolve)

    // Assess
    expect(got).toBe(expected)
  })

  it('keeps literal values plain JSON after the exact read, big integers and nested floats included', () => {
    // Prepare
    const text =
      '{"$expr":{"$in":[{"$getField":"inputs.n"},[{"$literal":[1.0,{"a":2.0}]},{"$literal":9007199254740993}]]}}'

    // Act
    const expr = parseQuery(parseJsonExact(text)).expr

    // Assess
    expect(expr).toEqual({
      k: 'in',
      a: { k: 'get', path: 'inputs.n' },
      list: [
        { k: 'lit', v: [1, { a: 2 }] },
        { k: 'lit', v: 9007199254740992 },
      ],
    })
  })

  it.each([
    [{ $eq: [lit(1)] }, ['$expr', '$eq']],
    [{ $not: [lit(1), lit(2)] }, ['$expr', '$not']],
    [{ $bogus: [] }, ['$expr', '$bogus']],
    [{ $contains: { input: lit('a') } }, ['$expr', '$contains', 'substr']],
    [{ $eq: [{ $convert: { input: lit(1), to: 'float' } }, lit(1)] }, ['$expr', '$eq', 0, '$convert', 'to']],
  ])('rejects %j at its exact path', (expr, path) => {
    expect(() => parseQuery({ $expr: expr })).toThrow()
    try {
      parseQuery({ $expr: expr })
    } catch (error) {
      expect((error as { issue: { path: unknown[] } }).issue.path).toEqual(path)
    }
  })
})
