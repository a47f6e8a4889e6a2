import type { Operand } from '#shared/schemas/query'
import { parseDatetimeMicros } from '#shared/tracing/time'

// The values Weave's query language compares (shared/tracing/query-eval.ts evaluates it): what an operand yields, a
// JSON value's ClickHouse string, the cast a literal implies and how each side is converted before comparing.

/** A value an operand yields. */
export type Val =
  | { t: 'json'; raw: unknown; present: boolean }
  | { t: 'date'; v: number | null }
  | { t: 'plain'; v: unknown }

/** Resolves a `$getField` path on the row being evaluated. */
export type FieldResolver = (path: string) => Val

/** Follows dot-path parts into a JSON value (integer parts index lists); `present` is false when a step is missing. */
export function walkJson(root: unknown, parts: readonly string[]): { raw: unknown; present: boolean } {
  let cur: unknown = root
  for (const part of parts) {
    if (Array.isArray(cur) && /^\d+$/.test(part)) {
      const i = Number(part)
      if (i >= cur.length) return { raw: undefined, present: false }
      cur = cur[i]
    } else if (typeof cur === 'object' && cur !== null && !Array.isArray(cur) && Object.hasOwn(cur, part)) {
      cur = (cur as Record<string, unknown>)[part]
    } else {
      return { raw: undefined, present: false }
    }
  }
  return { raw: cur, present: true }
}

/** The conversion a comparison applies to a side (`int`, `double`, `bool`) or none. */
export type Cast = 'int' | 'double' | 'bool' | 'none'

const INT_RE = /^[+-]?\d+$/
const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/** ClickHouse's string form of a JSON value: scalars as text, everything else ''. */
export function chString(raw: unknown): string {
  if (typeof raw === 'string') return raw
  if (typeof raw === 'number' || typeof raw === 'boolean') return JSON.stringify(raw)
  return ''
}

// Weave's `infer_literal_filter_cast`: a literal written as a float (`1.0`, `1e3`) is a float, as pydantic reads it.
function castOfLiteral(node: Operand & { k: 'lit' }): Cast {
  const v = node.v
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number') return node.float === true || !Number.isInteger(v) ? 'double' : 'int'
  return 'none'
}

/** The cast a literal operand implies, or undefined for any other operand. */
export function castOf(node: Operand): Cast | undefined {
  return node.k === 'lit' ? castOfLiteral(node) : undefined
}

/**
 * The cast a comparison applies to one side: only a `$getField` takes the cast inferred from the literal it is
 * compared with (`process_binary_operands`); a `$convert` is its own conversion and a literal keeps its type.
 */
export const castFor = (node: Operand, cast: Cast): Cast => (node.k === 'get' ? cast : 'none')

/** A ClickHouse string read with a cast: a number, 1/0 for a bool, null when it does not parse, else the text. */
export function castText(s: string, cast: Cast): unknown {
  switch (cast) {
    case 'int':
      return INT_RE.test(s.trim()) ? Number(s) : null
    case 'double':
      return FLOAT_RE.test(s.trim()) ? Number(s) : null
    case 'bool':
      if (s === 'true' || s === '1') return 1
      if (s === 'false' || s === '0') return 0
      return null
    default:
      return s
  }
}

/** A value as a comparison sees it under `cast`: JSON through its ClickHouse string, booleans as 1/0. */
export function coerce(val: Val, cast: Cast): unknown {
  if (val.t === 'json') return castText(chString(val.raw), cast)
  if (val.t === 'date') return val.v
  const v = val.v
  if (v === null || v === undefined) return null
  if (typeof v === 'boolean') return v ? 1 : 0
  if (cast === 'none') return v
  if (typeof v === 'number') return cast === 'int' && !Number.isInteger(v) ? Math.trunc(v) : v
  return castText(String(v), cast)
}

/** A literal compared with a datetime column becomes a datetime (epoch seconds or ISO string), else undefined. */
export function dateSide(other: Val, lit: unknown): unknown {
  if (other.t !== 'date') return undefined
  if (typeof lit === 'number' || typeof lit === 'string') return parseDatetimeMicros(lit) ?? null
  return undefined
}

/** SQL-style comparison: null when either side is NULL, numbers numerically, anything else as strings. */
export function compare(a: unknown, b: unknown): number | null {
  if (a === null || b === null || a === undefined || b === undefined) return null
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0
  const x = String(a)
  const y = String(b)
  return x < y ? -1 : x > y ? 1 : 0
}
