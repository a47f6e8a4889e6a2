import * as z from 'zod/mini'
import { exactPart, isJsonObject, PyFloat, PyInt } from '#shared/tracing/json-exact'

/**
 * Weave's query expression language (docs/tracing.md §6), parsed into a small AST. Validation is hand-written because
 * the grammar is recursive; every problem becomes a zod issue with its exact path, so the API answers 422 `{"detail"}`.
 */

/** Comparison operators. */
export type CmpOp = 'eq' | 'gt' | 'gte' | 'lt' | 'lte'
/** `$convert` targets. */
export type ConvertTo = 'double' | 'string' | 'int' | 'bool' | 'exists'

/** A parsed operand. */
export type Operand =
  /** `float`: a number written with a fraction or exponent (`1.0`), a float to Weave even when whole. */
  | { k: 'lit'; v: unknown; float?: true }
  | { k: 'get'; path: string }
  | { k: 'convert'; input: Operand; to: ConvertTo }
  | { k: 'size'; input: Operand }
  | Operation

/** A parsed operation (an operand that yields a boolean). */
export type Operation =
  | { k: 'and' | 'or'; ops: Operand[] }
  | { k: 'not'; op: Operand }
  | { k: 'cmp'; op: CmpOp; a: Operand; b: Operand }
  | { k: 'in'; a: Operand; list: Operand[] }
  | { k: 'contains'; input: Operand; substr: Operand; ci: boolean; token: boolean }

/** A parsed `Query` (`{"$expr": Operation}`). */
export type Query = { expr: Operation }

type Issue = { path: (string | number)[]; message: string }

class QueryParseError extends Error {
  constructor(readonly issue: Issue) {
    super(issue.message)
  }
}

const isObj = isJsonObject

// A literal's value as plain JSON: the exact reader's numbers (see `withExactQuery`) become numbers again.
function plain(v: unknown): unknown {
  if (v instanceof PyFloat || v instanceof PyInt) return v.toJSON()
  if (Array.isArray(v)) return v.map(plain)
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
  return v
}

function fail(path: (string | number)[], message: string): never {
  throw new QueryParseError({ path, message })
}

function single(v: unknown, path: (string | number)[]): [string, unknown] {
  if (!isObj(v)) fail(path, 'Input should be a valid operand object')
  const keys = Object.keys(v)
  if (keys.length !== 1) fail(path, `An operand must have exactly one key, got ${JSON.stringify(keys)}`)
  const key = keys[0] as string
  return [key, v[key]]
}

function list(v: unknown, path: (string | number)[], min: number, max = Number.POSITIVE_INFINITY): unknown[] {
  if (!Array.isArray(v)) fail(path, 'Input should be a valid list')
  if (v.length < min || v.length > max) {
    fail(
      path,
      min === max ? `Expected exactly ${min} operand(s), got ${v.length}` : `Expected at least ${min} operand(s)`,
    )
  }
  return v
}

const CMP: Record<string, CmpOp> = { $eq: 'eq', $gt: 'gt', $gte: 'gte', $lt: 'lt', $lte: 'lte' }
const CONVERT_TO = new Set(['double', 'string', 'int', 'bool', 'exists'])

function parseContains(body: unknown, path: (string | number)[], token: boolean): Operation {
  if (!isObj(body)) fail(path, 'Input should be a valid dictionary')
  for (const key of Object.keys(body)) {
    if (!['input', 'substr', 'case_insensitive'].includes(key)) fail([...path, key], 'Extra inputs are not permitted')
  }
  if (!('input' in body)) fail([...path, 'input'], 'Field required')
  if (!('substr' in body)) fail([...path, 'substr'], 'Field required')
  const ci = body.case_insensitive ?? false
  if (typeof ci !== 'boolean') fail([...path, 'case_insensitive'], 'Input should be a valid boolean')
  return {
    k: 'contains',
    input: parseOperand(body.input, [...path, 'input']),
    substr: parseOperand(body.substr, [...path, 'substr']),
    ci,
    token,
  }
}

function parseOperation(v: unknown, path: (string | number)[]): Operation {
  const op = parseOperand(v, path)
  if (op.k === 'lit' || op.k === 'get' || op.k === 'convert' || op.k === 'size') {
    fail(
      path,
      'Input should be an operation ($and, $or, $not, $eq, $gt, $gte, $lt, $lte, $in, $contains, $containsToken)',
    )
  }
  return op
}

function parseOperand(v: unknown, path: (string | number)[]): Operand {
  const [key, body] = single(v, path)
  const at = [...path, key]
  switch (key) {
    case '$literal':
      return body instanceof PyFloat ? { k: 'lit', v: body.value, float: true } : { k: 'lit', v: plain(body) }
    case '$getField':
      if (typeof body !== 'string') fail(at, 'Input should be a valid string')
      return { k: 'get', path: body }
    case '$convert': {
      if (!isObj(body)) fail(at, 'Input should be a valid dictionary')
      for (const k of Object.keys(body))
        if (k !== 'input' && k !== 'to') fail([...at, k], 'Extra inputs are not permitted')
      if (typeof body.to !== 'string' || !CONVERT_TO.has(body.to)) {
        fail([...at, 'to'], "Input should be 'double', 'string', 'int', 'bool' or 'exists'")
      }
      return { k: 'convert', input: parseOperand(body.input, [...at, 'input']), to: body.to as ConvertTo }
    }
    case '$size':
      return { k: 'size', input: parseOperand(body, at) }
    case '$and':
    case '$or': {
      const ops = list(body, at, 1).map((o, i) => parseOperand(o, [...at, i]))
      return { k: key === '$and' ? 'and' : 'or', ops }
    }
    case '$not': {
      const [only] = list(body, at, 1, 1)
      return { k: 'not', op: parseOperand(only, [...at, 0]) }
    }
    case '$in': {
      const [a, values] = list(body, at, 2, 2)
      const items = list(values, [...at, 1], 0).map((o, i) => parseOperand(o, [...at, 1, i]))
      return { k: 'in', a: parseOperand(a, [...at, 0]), list: items }
    }
    case '$contains':
    case '$containsToken':
      return parseContains(body, at, key === '$containsToken')
    default: {
      const cmp = CMP[key]
      if (cmp === undefined) fail(at, `Unknown operator '${key}'`)
      const [a, b] = list(body, at, 2, 2)
      return { k: 'cmp', op: cmp, a: parseOperand(a, [...at, 0]), b: parseOperand(b, [...at, 1]) }
    }
  }
}

/** Parses a raw `Query`; throws with the failing path and message when it is not valid. */
export function parseQuery(raw: unknown): Query {
  if (!isObj(raw)) fail([], 'Input should be a valid dictionary')
  for (const key of Object.keys(raw)) if (key !== '$expr') fail([key], 'Extra inputs are not permitted')
  if (!('$expr' in raw)) fail(['$expr'], 'Field required')
  return { expr: parseOperation(raw.$expr, ['$expr']) }
}

/**
 * A tracing request body with its `query` read again from the body's text by the exact reader, so that a literal
 * written `1.0` stays a float: Weave's pydantic keeps it one, and a float literal makes the field it is compared with
 * compare as a double (docs/tracing.md §6.3), where `JSON.parse` gives the integer 1. Other bodies come back as they
 * are; only a body with a `Query` holding a literal is read twice.
 */
export function withExactQuery(body: unknown, text: string): unknown {
  if (!isObj(body) || !isObj(body.query) || !('$expr' in body.query) || !text.includes('"$literal"')) return body
  const query = exactPart(text, ['query'])
  return query === undefined ? body : { ...body, query }
}

/** The `Query` schema: validates the grammar and yields the parsed AST. */
export const QuerySchema = z.pipe(
  z.unknown(),
  z.transform((raw, ctx): Query => {
    try {
      return parseQuery(raw)
    } catch (error) {
      if (!(error instanceof QueryParseError)) throw error
      ctx.issues.push({ code: 'custom', message: error.issue.message, input: raw, path: error.issue.path })
      return z.NEVER
    }
  }),
)
