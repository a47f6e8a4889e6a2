import { BadRequestError } from '#shared/errors/http-error'
import { type FeedbackQueryReq, type FeedbackRow, FeedbackRowSchema } from '#shared/schemas/feedback'
import { type SortKey, sortKey } from '#shared/tracing/call-fields'
import { jsonValueText } from '#shared/tracing/clickhouse-json'
import { pythonDumpsInOrder } from '#shared/tracing/digest'
import { queryFields } from '#shared/tracing/query-eval'
import { type Val, walkJson } from '#shared/tracing/query-values'
import { parseDatetimeMicros } from '#shared/tracing/time'

// The reference's feedback table (`TABLE_FEEDBACK` in weave/trace_server/feedback.py) has exactly the stored row's
// columns; `payload` is its one JSON column, stored as `payload_dump`, and the scorer maps are `Map` columns.
const COLUMNS = new Set(Object.keys(FeedbackRowSchema.shape))
const MAP_COLUMNS = new Set([
  'scorer_tag_reasons',
  'scorer_tag_confidences',
  'scorer_ratings',
  'scorer_rating_reasons',
  'scorer_rating_confidences',
])
const COUNT = 'count(*)'
// The names the table's SQL knows (orm.py `Select.all_columns`): `payload` is stored as `payload_dump`.
const DB_COLUMNS = new Set([...[...COLUMNS].filter((c) => c !== 'payload'), 'payload_dump'])
// The reference selects `FROM feedback` and passes a qualified name through (its "table prefix" for joins).
const TABLE_PREFIX = 'feedback.'

const head = (path: string) => path.split('.', 1)[0] ?? ''

/**
 * The column a `feedback.<column>` name stands for, or the path itself: the reference's ORM takes a table-qualified
 * stored column (`feedback.id`, `feedback.payload_dump`, a whole scorer map) and ClickHouse reads it as that column.
 */
export function unqualifiedFeedbackField(path: string): string {
  const rest = path.startsWith(TABLE_PREFIX) ? path.slice(TABLE_PREFIX.length) : undefined
  return rest !== undefined && DB_COLUMNS.has(rest) ? rest : path
}

// `_transform_external_field_to_internal_field` (orm.py) accepts a column, a path into the JSON column, a key of a
// map column (the key is the whole rest, dots included) and a stored column qualified by the table. Its looser prefix
// check also lets `<column>.<x>` through, which ClickHouse then cannot run; the reference's ClickHouse mirror
// (in_memory_trace_server.py `_orm_field_value`) refuses those as unknown, and so does Loom. A qualified name is
// nothing more: `feedback.payload` (not a stored name) and `feedback.payload.<path>` are unknown there too.
function isFeedbackField(path: string): boolean {
  if (COLUMNS.has(path) || DB_COLUMNS.has(unqualifiedFeedbackField(path))) return true
  const column = head(path)
  return path.length > column.length && (column === 'payload' || MAP_COLUMNS.has(column))
}

/**
 * Checks every field a `feedback/query` names, in the reference's order (`fields`, then `query`, then `sort_by`),
 * before anything is read: an unknown one is 400 `Unknown field: <field>` (the ORM's `ValueError`). `count(*)` is
 * a field only in `fields`.
 */
export function assertFeedbackFields(req: FeedbackQueryReq): void {
  const named = [
    ...(req.fields ?? []).filter((f) => f.toLowerCase() !== COUNT),
    ...(req.query ? queryFields(req.query.expr) : []),
    ...(req.sort_by ?? []).map((s) => s.field),
  ]
  const unknown = named.find((f) => !isFeedbackField(f))
  if (unknown !== undefined) throw new BadRequestError(`Unknown field: ${unknown}`)
}

/**
 * Resolves a checked field on a feedback row for the shared query evaluator: `created_at` as a datetime, the whole
 * payload (`payload`, `payload_dump`) as its stored JSON text, `payload` paths and map keys as JSON values, every
 * other column (the `scorer_tags` array included) as a plain value. `feedback.<column>` reads as the column.
 */
export function feedbackField(row: FeedbackRow, field: string): Val {
  const path = unqualifiedFeedbackField(field)
  if (path === 'created_at') return { t: 'date', v: parseDatetimeMicros(row.created_at) ?? null }
  // ClickHouse compares the stored `payload_dump` itself, Python's `json.dumps(payload)` (orm.py `Insert.prepare`).
  if (path === 'payload_dump' || path === 'payload') return { t: 'plain', v: pythonDumpsInOrder(row.payload) }
  const columns = row as Record<string, unknown>
  const column = head(path)
  // A map key is the whole rest of the path; a payload path is split into JSON steps.
  const rest = path.length > column.length ? path.slice(column.length + 1) : undefined
  if (column === 'payload') return { t: 'json', ...walkJson(row.payload, rest?.split('.') ?? []) }
  if (MAP_COLUMNS.has(column)) return { t: 'json', ...walkJson(columns[column], rest === undefined ? [] : [rest]) }
  return { t: 'plain', v: columns[path] ?? null }
}

/**
 * A feedback row's sort key for a field, ordered by `compareKeys` as the reference's ORM orders (orm.py
 * `Select.prepare`): a `payload` path by existence (always first), then as a number, then as a string; any other
 * field by its value; nulls last in either direction.
 */
export function feedbackSortKey(row: FeedbackRow, path: string): SortKey {
  const val = feedbackField(row, path)
  // The ORM tests existence with JSON_EXISTS, so an explicit null is present (and reads as ''), unlike on calls.
  if (val.t === 'json' && val.present && val.raw === null) return [0, 1, '']
  return sortKey(val)
}

// One result column, named as `tuples_to_rows` names it (a trailing `_dump` dropped, so `payload_dump` comes back as
// `payload`). Only the JSON column's own name is parsed: a payload path is ClickHouse's `toString(JSON_VALUE(…))`
// text, and `feedback.payload_dump` the stored JSON text.
function column(row: FeedbackRow | undefined, field: string): [string, unknown] {
  const name = field.endsWith('_dump') ? field.slice(0, -'_dump'.length) : field
  if (row === undefined) return [name, null]
  if (name === 'payload') return [name, row.payload]
  const path = unqualifiedFeedbackField(field)
  if (path === 'created_at') return [name, row.created_at]
  const val = feedbackField(row, field)
  if (val.t !== 'json') return [name, val.v]
  if (head(path) === 'payload') return [name, jsonValueText(val.raw, val.present)]
  return [name, val.present ? (val.raw ?? null) : null]
}

/**
 * `feedback/query`'s answer from the matching, sorted rows: the page projected to the requested `fields` (all columns
 * when none) and the count of all matches. With `count(*)` among the fields the result is one aggregate row, as
 * ClickHouse gives it (the count of all matches, other fields from the last row), and the page applies to that row.
 */
export function pageFeedback(rows: FeedbackRow[], req: FeedbackQueryReq) {
  const start = req.offset ?? 0
  const page = <T>(all: T[]) => all.slice(start, req.limit == null ? undefined : start + req.limit)
  const fields = req.fields ?? []
  let result: Record<string, unknown>[]
  if (fields.some((f) => f.toLowerCase() === COUNT)) {
    const last = rows.at(-1)
    result = page([
      Object.fromEntries(fields.map((f) => (f.toLowerCase() === COUNT ? [f, rows.length] : column(last, f)))),
    ])
  } else if (fields.length === 0) result = page(rows)
  else result = page(rows).map((row) => Object.fromEntries(fields.map((f) => column(row, f))))
  return { result, total_count: rows.length }
}
