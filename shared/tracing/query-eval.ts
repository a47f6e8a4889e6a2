import { BadRequestError } from '#shared/errors/http-error'
import type { Operand, Operation, Query } from '#shared/schemas/query'
import {
  type Cast,
  castFor,
  castOf,
  castText,
  chString,
  coerce,
  compare,
  dateSide,
  type FieldResolver,
  type Val,
} from '#shared/tracing/query-values'

/**
 * Evaluates a parsed `Query` against one row with ClickHouse's semantics (docs/tracing.md §6.3): JSON values read as
 * strings ('' when missing, null or non-scalar), a field's comparison cast inferred from the literal on the other side,
 * boolean literals as 1/0, three-valued logic (NULL excludes the row), datetimes compared with epoch seconds or ISO
 * strings. The one evaluator of Weave's query language: each entity (calls, costs, feedback) supplies a
 * `FieldResolver`.
 */

/** Evaluates an operand to a value. */
function value(node: Operand, row: FieldResolver): Val {
  switch (node.k) {
    case 'lit':
      return { t: 'plain', v: node.v }
    case 'get':
      return row(node.path)
    case 'size': {
      const inner = value(node.input, row)
      const raw = inner.t === 'json' ? inner.raw : inner.v
      return { t: 'plain', v: Array.isArray(raw) ? raw.length : 0 }
    }
    case 'convert': {
      const inner = value(node.input, row)
      if (node.to === 'exists') return { t: 'plain', v: inner.t === 'json' ? inner.present : inner.v !== null }
      if (node.to === 'string') {
        const s = inner.t === 'json' ? chString(inner.raw) : inner.v === null ? null : String(inner.v)
        return { t: 'plain', v: s }
      }
      return { t: 'plain', v: coerce(inner, node.to) }
    }
    default:
      return { t: 'plain', v: evaluate(node, row) }
  }
}

function sides(a: Operand, b: Operand, row: FieldResolver): [unknown, unknown] {
  const va = value(a, row)
  const vb = value(b, row)
  const cast = castOf(b) ?? castOf(a) ?? 'none'
  const da = a.k === 'lit' ? dateSide(vb, a.v) : undefined
  const db = b.k === 'lit' ? dateSide(va, b.v) : undefined
  return [da !== undefined ? da : coerce(va, castFor(a, cast)), db !== undefined ? db : coerce(vb, castFor(b, cast))]
}

function asText(val: Val): string | null {
  if (val.t === 'json') return chString(val.raw)
  if (val.t === 'date') return val.v === null ? null : String(val.v)
  return val.v === null || val.v === undefined ? null : String(val.v)
}

function isTokenChar(ch: string | undefined): boolean {
  return ch !== undefined && (/[A-Za-z0-9]/.test(ch) || ch.charCodeAt(0) > 127)
}

function containsToken(hay: string, needle: string): boolean {
  if (needle === '') return false
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1)) {
    if (!isTokenChar(hay[at - 1]) && !isTokenChar(hay[at + needle.length])) return true
  }
  return false
}

/** Evaluates an operation to true, false or null (SQL NULL). */
export function evaluate(node: Operation, row: FieldResolver): boolean | null {
  switch (node.k) {
    case 'and': {
      let sawNull = false
      for (const op of node.ops) {
        const r = truth(op, row)
        if (r === false) return false
        if (r === null) sawNull = true
      }
      return sawNull ? null : true
    }
    case 'or': {
      let sawNull = false
      for (const op of node.ops) {
        const r = truth(op, row)
        if (r === true) return true
        if (r === null) sawNull = true
      }
      return sawNull ? null : false
    }
    case 'not': {
      const r = truth(node.op, row)
      return r === null ? null : !r
    }
    case 'cmp': {
      if (node.op === 'eq' && (isNullLit(node.a) || isNullLit(node.b))) {
        const other = value(isNullLit(node.a) ? node.b : node.a, row)
        return other.t === 'json' ? false : other.v === null || other.v === undefined
      }
      const [x, y] = sides(node.a, node.b, row)
      const c = compare(x, y)
      if (c === null) return null
      return { eq: c === 0, gt: c > 0, gte: c >= 0, lt: c < 0, lte: c <= 0 }[node.op]
    }
    case 'in': {
      const casts = new Set(node.list.map((o) => castOf(o) ?? 'none'))
      const cast: Cast =
        casts.size === 1
          ? ([...casts][0] as Cast)
          : [...casts].every((c) => c === 'int' || c === 'double')
            ? 'double'
            : 'none'
      const left = value(node.a, row)
      const x = left.t === 'date' ? left.v : coerce(left, castFor(node.a, cast))
      if (x === null) return null
      return node.list.some((o) => {
        const v = value(o, row)
        const y = o.k === 'lit' ? (dateSide(left, o.v) ?? coerce(v, cast)) : coerce(v, cast)
        return compare(x, y) === 0
      })
    }
    case 'contains': {
      const needleVal = value(node.substr, row)
      const needle = needleVal.t === 'plain' ? needleVal.v : chString((needleVal as { raw?: unknown }).raw)
      if (typeof needle !== 'string') throw new BadRequestError('$contains substr must be a string')
      const hayRaw = value(node.input, row)
      // An array column (feedback `scorer_tags`) means membership; JSON arrays stay '' as in ClickHouse.
      if (hayRaw.t === 'plain' && Array.isArray(hayRaw.v)) {
        const n = node.ci ? needle.toLowerCase() : needle
        return hayRaw.v.some((h) => {
          const t = chString(h)
          return (node.ci ? t.toLowerCase() : t) === n
        })
      }
      const hay = asText(hayRaw)
      if (hay === null) return null
      const h = node.ci ? hay.toLowerCase() : hay
      const n = node.ci ? needle.toLowerCase() : needle
      return node.token ? containsToken(h, n) : h.includes(n)
    }
  }
}

function isNullLit(node: Operand): boolean {
  return node.k === 'lit' && node.v === null
}

function truth(node: Operand, row: FieldResolver): boolean | null {
  if (
    node.k === 'and' ||
    node.k === 'or' ||
    node.k === 'not' ||
    node.k === 'cmp' ||
    node.k === 'in' ||
    node.k === 'contains'
  ) {
    return evaluate(node, row)
  }
  const v = value(node, row)
  const raw = v.t === 'json' ? castText(chString(v.raw), 'bool') : v.v
  if (raw === null || raw === undefined) return null
  return Boolean(raw)
}

/** True when the row satisfies the query (NULL counts as not satisfied). */
export function matches(query: Query, row: FieldResolver): boolean {
  return evaluate(query.expr, row) === true
}

/** Every `$getField` path a query reads (for index planning and `expand_columns`). */
export function queryFields(node: Operand, into: string[] = []): string[] {
  switch (node.k) {
    case 'get':
      into.push(node.path)
      break
    case 'lit':
      break
    case 'size':
    case 'convert':
      queryFields(node.input, into)
      break
    case 'and':
    case 'or':
      for (const o of node.ops) queryFields(o, into)
      break
    case 'not':
      queryFields(node.op, into)
      break
    case 'cmp':
      queryFields(node.a, into)
      queryFields(node.b, into)
      break
    case 'in':
      queryFields(node.a, into)
      for (const o of node.list) queryFields(o, into)
      break
    case 'contains':
      queryFields(node.input, into)
      queryFields(node.substr, into)
      break
  }
  return into
}

function idOfEq(node: Operand): string | undefined {
  if (node.k !== 'cmp' || node.op !== 'eq') return undefined
  const [field, lit] = node.a.k === 'get' ? [node.a, node.b] : [node.b, node.a]
  if (field.k !== 'get' || field.path !== 'id' || lit.k !== 'lit' || typeof lit.v !== 'string') return undefined
  return lit.v
}

/**
 * The ids a purge query names (`$eq` on `id`, an `$or` of them, or an `$in` on `id`), or undefined for any other
 * query: Weave purges feedback and costs by id only.
 */
export function purgeIdsOf(query: Query): string[] | undefined {
  const expr = query.expr
  const single = idOfEq(expr)
  if (single !== undefined) return [single]
  if (expr.k === 'in' && expr.a.k === 'get' && expr.a.path === 'id') {
    const ids = expr.list.map((o) => (o.k === 'lit' && typeof o.v === 'string' ? o.v : undefined))
    return ids.every((id) => id !== undefined) ? (ids as string[]) : undefined
  }
  if (expr.k === 'or') {
    const ids = expr.ops.map(idOfEq)
    return ids.every((id) => id !== undefined) ? (ids as string[]) : undefined
  }
  return undefined
}
