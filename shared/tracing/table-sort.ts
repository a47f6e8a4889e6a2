import { BadRequestError } from '#shared/errors/http-error'
import type { SortBy } from '#shared/schemas/obj'
import { isJsonObject, PyInt, plainNumber } from '#shared/tracing/json-exact'

// `table/query`'s `sort_by`, as Weave's ClickHouse server runs it (docs/tracing.md §9): each field is a dot path into
// the row value, and `OrderField.as_sql` orders a JSON path by three keys: whether it exists (`JSONType(val_dump,
// 'a', 'b')` is not 'Null'; always first, in both directions), then `toFloat64OrNull` of its `JSON_VALUE` in the
// requested direction, then the same text in the requested direction. ClickHouse puts NULLs last whatever the
// direction, so numbers precede everything else either way. Ties keep the table's order (ClickHouse leaves it open).

// Python's `str.isspace` characters: Weave refuses a field that `strip()`s to nothing.
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python counts the separators U+001C–U+001F as spaces.
const PY_BLANK = /^[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/
// ClickHouse's float text (`toFloat64OrNull`): no surrounding spaces; `inf`, `infinity` and `nan` in any case.
const FLOAT_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
const SPECIAL_FLOAT = /^([+-]?)(inf|infinity|nan)$/i
// A part Python's `int()` takes becomes an array index in the JSON_VALUE path (`quote_json_path_parts`); only plain
// digits name an element, the rest (`-1`, `+1`, `1_0`, ` 1`) match nothing.
const INDEX = /^\d+$/
const PY_INT = /^\s*[+-]?\d+(_\d+)*\s*$/

/**
 * Checks `sort_by` fields as Weave's `table_query_stream` does before reading anything: 400 `Sort field cannot be
 * empty`, or `Invalid sort field '<field>': …` for dots at an end, consecutive dots or a blank path component.
 */
export function assertTableSortFields(sorts: readonly SortBy[]): void {
  for (const { field } of sorts) {
    if (PY_BLANK.test(field)) throw new BadRequestError('Sort field cannot be empty')
    if (field.startsWith('.') || field.endsWith('.') || field.includes('..')) {
      throw new BadRequestError(
        `Invalid sort field '${field}': field names cannot start/end with dots or contain consecutive dots`,
      )
    }
    if (field.split('.').some((part) => PY_BLANK.test(part))) {
      throw new BadRequestError(`Invalid sort field '${field}': field path components cannot be empty`)
    }
  }
}

// The exact-number wrappers (json-exact.ts) are numbers here, not objects to walk into.
const isObject = isJsonObject

// `JSONType(val_dump, 'a', 'b')`: every part is a String argument, a key of an object (never an array index).
function exists(row: unknown, parts: readonly string[]): boolean {
  let cur = row
  for (const part of parts) {
    if (!isObject(cur) || !Object.hasOwn(cur, part)) return false
    cur = cur[part]
  }
  return cur !== null
}

// `JSON_VALUE(val_dump, '$."a"[0]')`: digit parts index arrays, other parts are object keys.
function valueAt(row: unknown, parts: readonly string[]): unknown {
  let cur = row
  for (const part of parts) {
    if (INDEX.test(part)) {
      if (!Array.isArray(cur)) return undefined
      cur = cur[Number(part)]
    } else if (PY_INT.test(part) || !isObject(cur) || !Object.hasOwn(cur, part)) {
      return undefined
    } else {
      cur = cur[part]
    }
  }
  return cur
}

// `coalesce(nullIf(JSON_VALUE(…), 'null'), '')`: scalars as text, null, missing and non-scalars (objects, arrays) ''.
function valueText(raw: unknown): string {
  if (typeof raw === 'string') return raw === 'null' ? '' : raw
  if (typeof raw === 'number') return String(raw)
  if (typeof raw === 'boolean') return raw ? 'true' : 'false'
  return ''
}

function toFloat64OrNull(text: string): number | null {
  if (FLOAT_TEXT.test(text)) return Number(text)
  const special = SPECIAL_FLOAT.exec(text)
  if (special === null) return null
  if ((special[2] as string).toLowerCase() === 'nan') return Number.NaN
  return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY
}

/** One row's keys for one sort field; `text` as UTF-8 bytes, which is how ClickHouse compares strings. */
type FieldKey = { exists: boolean; num: number | null; text: Buffer }

function fieldKey(row: unknown, parts: readonly string[]): FieldKey {
  const found = valueAt(row, parts)
  const raw = plainNumber(found)
  // An integer beyond 2^53 keeps its digits for the text key (ClickHouse reads 64-bit integers exactly), so two that
  // are one double apart still order by their digits.
  const text = found instanceof PyInt ? found.digits : valueText(raw)
  const num = typeof raw === 'number' ? raw : toFloat64OrNull(text)
  return { exists: exists(row, parts), num, text: Buffer.from(text, 'utf8') }
}

// NULL after NaN after the numbers, in both directions (ClickHouse's default NULLS LAST).
const numRank = (n: number | null) => (n === null ? 2 : Number.isNaN(n) ? 1 : 0)

function compareField(a: FieldKey, b: FieldKey, descending: boolean): number {
  if (a.exists !== b.exists) return a.exists ? -1 : 1
  const ra = numRank(a.num)
  const rb = numRank(b.num)
  if (ra !== rb) return ra - rb
  const sign = descending ? -1 : 1
  if (ra === 0 && a.num !== b.num) return ((a.num as number) < (b.num as number) ? -1 : 1) * sign
  return Buffer.compare(a.text, b.text) * sign
}

/**
 * Sorts rows by `sort_by` as Weave's ClickHouse server does (see above); rows equal on every field keep their order
 * in the table. Fields are dot paths into `val`, checked first with `assertTableSortFields`.
 */
export function sortTableRows<R extends { val: unknown; original_index: number }>(
  rows: readonly R[],
  sorts: readonly SortBy[],
): R[] {
  const fields = sorts.map((s) => ({ parts: s.field.split('.'), descending: s.direction === 'desc' }))
  const keyed = rows.map((row) => ({ row, keys: fields.map((f) => fieldKey(row.val, f.parts)) }))
  keyed.sort((a, b) => {
    for (const [i, f] of fields.entries()) {
      const c = compareField(a.keys[i] as FieldKey, b.keys[i] as FieldKey, f.descending)
      if (c !== 0) return c
    }
    return a.row.original_index - b.row.original_index
  })
  return keyed.map((k) => k.row)
}
