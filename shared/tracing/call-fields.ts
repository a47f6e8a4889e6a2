import { BadRequestError } from '#shared/errors/http-error'
import { InvalidFieldError } from '#shared/errors/tracing-errors'
import { type CallRelations, parseRelatedField, relatedField } from '#shared/tracing/call-related-fields'
import { callLatencyMs, callStatus, callTraceName, type LoadedCall } from '#shared/tracing/call-view'
import { type Val, walkJson } from '#shared/tracing/query-values'
import { storedToMicros } from '#shared/tracing/time'

const STRING_COLUMNS = new Set([
  'id',
  'project_id',
  'op_name',
  'display_name',
  'trace_id',
  'parent_id',
  'thread_id',
  'turn_id',
  'exception',
  'wb_user_id',
  'wb_run_id',
])
const NUMBER_COLUMNS = new Set(['wb_run_step', 'wb_run_step_end'])
const DATE_COLUMNS = new Set(['started_at', 'ended_at', 'deleted_at'])
const JSON_COLUMNS = new Set(['inputs', 'output', 'attributes', 'summary'])
// Array columns: `$contains` on them is membership, as on feedback's `scorer_tags`.
const ARRAY_COLUMNS = new Set(['input_refs', 'output_refs'])
// Columns the reference knows but refuses in a query (`DISALLOWED_FILTERING_FIELDS`) and in a sort.
const STORAGE_COLUMNS = new Set(['storage_size_bytes', 'total_storage_size_bytes'])

const notAllowed = (path: string) => new InvalidFieldError(`Field ${path} is not allowed`)

function isCallPath(path: string): boolean {
  if (STRING_COLUMNS.has(path) || NUMBER_COLUMNS.has(path) || DATE_COLUMNS.has(path) || ARRAY_COLUMNS.has(path)) {
    return true
  }
  return path.startsWith('summary.weave.') || JSON_COLUMNS.has(path.split('.', 1)[0] ?? '')
}

/**
 * Checks a query path (`$getField`) before anything is read, as the reference compiles its SQL first: a feedback or
 * queue path must be well-formed, anything else must name a call column or a path into a JSON column; otherwise
 * `InvalidFieldError` (422 `Field <path> is not allowed`).
 */
export function assertQueryField(path: string): void {
  if (parseRelatedField(path) !== undefined) return
  if (STORAGE_COLUMNS.has(path) || !isCallPath(path)) throw notAllowed(path)
}

// `columns` names the reference's field registry takes besides the call's own columns (`get_field_by_name`): the
// stored `<column>_dump` names, and `otel`/`otel_dump`, the stored OTel span (returned inside `attributes`).
const COLUMN_ALIASES = new Map([
  ['inputs_dump', 'inputs'],
  ['output_dump', 'output'],
  ['attributes_dump', 'attributes'],
  ['summary_dump', 'summary'],
  ['otel', 'attributes'],
  ['otel_dump', 'attributes'],
])

/**
 * The top-level key a `columns` entry of `calls/stream_query` returns: only its first path segment counts, and it must
 * name a call column (docs/tracing.md §7.4), else `InvalidFieldError` (422 `Field <segment> is not allowed`).
 */
export function callColumn(column: string): string {
  const head = column.split('.', 1)[0] ?? ''
  const alias = COLUMN_ALIASES.get(head)
  if (alias !== undefined) return alias
  if (STORAGE_COLUMNS.has(head) || isCallPath(head)) return head
  throw notAllowed(head)
}

/** Checks a `sort_by` field like a query path; the storage sizes are 400 `Field <f> is not allowed in ORDER BY`. */
export function assertSortField(path: string): void {
  if (STORAGE_COLUMNS.has(path)) throw new BadRequestError(`Field ${path} is not allowed in ORDER BY`)
  assertQueryField(path)
}

/**
 * Resolves a query or sort path on a call: a column, a derived `summary.weave.*` field, a JSON path, or (with the
 * request's `relations`) one of the call's feedback or queue fields.
 */
export function callField(call: LoadedCall, path: string, relations?: CallRelations): Val {
  const related = parseRelatedField(path)
  if (related !== undefined) return relatedField(call.id, related, relations)
  if (ARRAY_COLUMNS.has(path)) return { t: 'plain', v: (call as Record<string, unknown>)[path] ?? [] }
  if (STRING_COLUMNS.has(path) || NUMBER_COLUMNS.has(path)) {
    return { t: 'plain', v: (call as Record<string, unknown>)[path] ?? null }
  }
  if (DATE_COLUMNS.has(path)) {
    const stored = (call as Record<string, unknown>)[path] as string | null
    return { t: 'date', v: stored === null ? null : storedToMicros(stored) }
  }
  switch (path) {
    case 'summary.weave.status':
      return { t: 'plain', v: callStatus(call) }
    case 'summary.weave.latency_ms':
      return { t: 'plain', v: callLatencyMs(call) }
    case 'summary.weave.trace_name':
      return { t: 'plain', v: call.display_name ?? callTraceName(call) }
    case 'summary.weave.display_name':
      return { t: 'plain', v: call.display_name }
  }
  const [head, ...rest] = path.split('.')
  if (head !== undefined && JSON_COLUMNS.has(head)) {
    const root = (call as Record<string, unknown>)[head]
    return { t: 'json', ...walkJson(root, rest) }
  }
  throw notAllowed(path)
}

/** A comparable sort key: presence, kind (number before string), value. */
export type SortKey = [number, number, string | number]

/** A comparable key for sorting by a path: present first, then numbers, then strings; nulls last. */
export function sortKey(val: Val): SortKey {
  if (val.t === 'json') {
    if (!val.present || val.raw === null || val.raw === undefined) return [1, 0, '']
    const raw = val.raw
    if (typeof raw === 'number') return [0, 0, raw]
    const s = typeof raw === 'string' ? raw : JSON.stringify(raw)
    const n = Number(s)
    return s.trim() !== '' && Number.isFinite(n) ? [0, 0, n] : [0, 1, s]
  }
  const v = val.v
  if (v === null || v === undefined) return [1, 0, '']
  if (typeof v === 'number') return [0, 0, v]
  if (typeof v === 'boolean') return [0, 0, v ? 1 : 0]
  return [0, 1, String(v)]
}

/**
 * Compares two sort keys; `descending` reverses the values only. Presence and kind are never reversed: ClickHouse
 * sorts a JSON path by existence DESC, then `toFloat64OrNull` and the string in the requested direction, and puts
 * NULLs (the non-numbers of the numeric term) last either way, so numbers precede strings in both directions.
 */
export function compareKeys(a: SortKey, b: SortKey, descending: boolean): number {
  if (a[0] !== b[0]) return a[0] - b[0]
  if (a[0] === 1) return 0
  if (a[1] !== b[1]) return a[1] - b[1]
  const c = a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0
  return descending ? -c : c
}
