// The Traces page's requests and the derived values of a call it shows.

// A `.js` path: the root tsconfig (NodeNext) checks this file too, through the unit tests that import it.
import { formatCount, formatTotal } from './format.js'

/** A call as `calls/stream_query` returns it (the fields the console reads). */
export type Call = {
  id: string
  project_id: string
  op_name: string
  display_name?: string | null
  trace_id: string
  parent_id?: string | null
  started_at: string
  ended_at?: string | null
  exception?: string | null
  inputs?: Record<string, unknown>
  output?: unknown
  attributes?: Record<string, unknown>
  summary?: Record<string, unknown> | null
  wb_user_id?: string | null
  wb_run_id?: string | null
}

/**
 * Every status a call's row can show: `summary.weave.status` as the API derives it on every read
 * (docs/tracing.md §7.2), `descendant_error` for a call that ended well but has a failed call below it.
 */
export const CALL_STATUSES = ['success', 'error', 'descendant_error', 'running'] as const
export type CallStatus = (typeof CALL_STATUSES)[number]

/** The Traces page's filters. */
export type CallFilters = {
  op: string
  status: '' | CallStatus
  /** `datetime-local` values or ISO strings; empty for no bound. */
  from: string
  to: string
  text: string
  rootsOnly: boolean
}

/**
 * The name a row shows (`callName`) as the API derives it: the display name, else the op's name without the
 * `weave:///<entity>/<project>/op/` ref and its version (docs/tracing.md §7.2). Filters and sorts use it rather than
 * `op_name`, whose hidden ref would match every Weave op on the entity or project name and sort by the ref.
 */
export const SHOWN_NAME = 'summary.weave.trace_name'

/** Table columns and the query path each sorts by; tokens and cost sum per-model maps, so they sort the loaded page. */
export const CALL_COLUMNS = [
  { id: 'op', label: 'Op name', path: SHOWN_NAME },
  { id: 'status', label: 'Status', path: 'summary.weave.status' },
  { id: 'started', label: 'Started', path: 'started_at' },
  { id: 'latency', label: 'Latency', path: 'summary.weave.latency_ms' },
  { id: 'tokens', label: 'Tokens', path: null },
  { id: 'cost', label: 'Cost', path: null },
  { id: 'user', label: 'User', path: 'wb_user_id' },
] as const
export type CallColumn = (typeof CALL_COLUMNS)[number]['id']

const get = (path: string) => ({ $getField: path })
const lit = (v: unknown) => ({ $literal: v })

/** A `datetime-local` value or ISO string as ISO 8601 UTC, or undefined when empty or invalid. */
export function toIso(value: string): string | undefined {
  if (value.trim() === '') return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

/** The `query` of `calls/stream_query` and `calls/query_stats` for the filters, or undefined when none is set. */
export function callsQuery(filters: CallFilters): Record<string, unknown> | undefined {
  const ops: unknown[] = []
  if (filters.op.trim() !== '') {
    ops.push({ $contains: { input: get(SHOWN_NAME), substr: lit(filters.op.trim()), case_insensitive: true } })
  }
  if (filters.status !== '') ops.push({ $eq: [get('summary.weave.status'), lit(filters.status)] })
  const from = toIso(filters.from)
  const to = toIso(filters.to)
  if (from !== undefined) ops.push({ $gte: [get('started_at'), lit(from)] })
  if (to !== undefined) ops.push({ $lt: [get('started_at'), lit(to)] })
  const text = filters.text.trim()
  if (text !== '') {
    // `$contains` follows Weave's ClickHouse semantics: a JSON field is text only when it holds a string, number or
    // boolean, and an object reads as ''. So a string output matches, but text inside an object output never does and
    // inputs (always an object) are not asked; the search box and docs/console.md promise only what matches. The name
    // is the one shown (display name, else the op's name), not `op_name` with its hidden ref.
    ops.push({
      $or: [SHOWN_NAME, 'output', 'exception'].map((field) => ({
        $contains: { input: get(field), substr: lit(text), case_insensitive: true },
      })),
    })
  }
  if (ops.length === 0) return undefined
  return { $expr: ops.length === 1 ? ops[0] : { $and: ops } }
}

/** The body of `calls/stream_query` for one page of the table. */
export function callsPageRequest(
  project: string,
  filters: CallFilters,
  sort: { column: CallColumn; direction: 'asc' | 'desc' },
  page: { offset: number; limit: number },
): Record<string, unknown> {
  const column = CALL_COLUMNS.find((c) => c.id === sort.column)
  const query = callsQuery(filters)
  return {
    project_id: project,
    ...(filters.rootsOnly ? { filter: { trace_roots_only: true } } : {}),
    ...(query === undefined ? {} : { query }),
    sort_by: [{ field: column?.path ?? 'started_at', direction: column?.path ? sort.direction : 'desc' }],
    offset: page.offset,
    limit: page.limit,
    include_costs: true,
    // The table's columns: the tree's, plus the user.
    columns: [...TREE_COLUMNS, 'wb_user_id'],
  }
}

/** The columns the trace view's tree and waterfall read (a selected call's inputs and output come from `call/read`). */
export const TREE_COLUMNS = [
  'id',
  'op_name',
  'display_name',
  'trace_id',
  'parent_id',
  'started_at',
  'ended_at',
  'exception',
  'summary',
]

/**
 * The body of `calls/stream_query` for one page of a trace: its calls after `after` in id order, the trace index's
 * own order, so the server reads about one page of the index per request however large the trace.
 */
export function tracePageRequest(
  project: string,
  traceId: string,
  after: string | undefined,
  limit: number,
): Record<string, unknown> {
  return {
    project_id: project,
    filter: { trace_ids: [traceId] },
    ...(after === undefined ? {} : { query: { $expr: { $gt: [get('id'), lit(after)] } } }),
    sort_by: [{ field: 'id', direction: 'asc' }],
    limit,
    columns: TREE_COLUMNS,
    // Each call's costs (`summary.weave.costs`): the trace's tokens and cost are counted from its calls (lib/usage.ts).
    include_costs: true,
  }
}

/**
 * The most calls read to count the tokens and cost of a Traces page (its rows' traces, read whole: lib/usage.ts). Past
 * it, rows whose trace was not read to its end show no figure; the trace view counts any trace.
 */
export const USAGE_CALLS_CAP = 10_000

/**
 * The body of `calls/stream_query` that reads every call of the given traces with only what counting their usage
 * needs: ids, parents and summaries with costs. No order (`sort_by: []`), so the server stops at the cap; it reads a
 * trace's index to its end before the next trace's, so a capped answer holds every trace it reached but the last whole.
 */
export function traceUsageRequest(project: string, traceIds: readonly string[]): Record<string, unknown> {
  return {
    project_id: project,
    filter: { trace_ids: [...traceIds] },
    sort_by: [],
    limit: USAGE_CALLS_CAP,
    include_costs: true,
    columns: ['id', 'parent_id', 'trace_id', 'summary'],
  }
}

/**
 * The most calls a filtered total counts: the unfiltered total comes from the project's call counter, but any filter
 * (root calls only, the default, included) or query is counted by reading the matching calls, so a larger selection is
 * shown as "10,000+" instead of keeping the server busy for a minute.
 */
export const TOTAL_CAP = 10_000

/**
 * The Traces page's pager for a page of `rows` calls at `offset`: the range it shows, whether Next may move on, and
 * where Previous goes. `total` is undefined while `calls/query_stats` counts a new selection: the range then says so
 * ("of …") and a full page is enough for Next, so a stale or missing total never blocks paging. Previous goes one page
 * back, or from an offset past the last row (a link made before rows went away) to the last page with rows.
 */
export function pagerState(
  offset: number,
  rows: number,
  pageSize: number,
  total: { count: number; has_more?: boolean } | undefined,
): { range: string; hasNext: boolean; previous: number } {
  const range =
    rows === 0
      ? ''
      : `${formatCount(offset + 1)}–${formatCount(offset + rows)} of ${total === undefined ? '…' : formatTotal(total)}`
  const more = total === undefined || total.has_more === true || offset + pageSize < total.count
  const back = Math.max(0, offset - pageSize)
  const pastEnd = rows === 0 && total !== undefined && total.has_more !== true && offset >= total.count
  const last = total === undefined ? 0 : Math.max(0, Math.floor((total.count - 1) / pageSize) * pageSize)
  return { range, hasNext: rows >= pageSize && more, previous: pastEnd ? last : back }
}

/** The body of `calls/query_stats` for the same filters (the total behind the pager), capped unless unfiltered. */
export function callsStatsRequest(project: string, filters: CallFilters): Record<string, unknown> {
  const query = callsQuery(filters)
  const counted = filters.rootsOnly || query !== undefined
  return {
    project_id: project,
    ...(filters.rootsOnly ? { filter: { trace_roots_only: true } } : {}),
    ...(query === undefined ? {} : { query }),
    ...(counted ? { limit: TOTAL_CAP } : {}),
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The derived status (`summary.weave.status`), else computed as the API does (without `status_counts`). */
export function callStatus(call: Call): string {
  const weave = isObj(call.summary?.weave) ? call.summary.weave : {}
  if (typeof weave.status === 'string') return weave.status
  if (call.exception) return 'error'
  return call.ended_at ? 'success' : 'running'
}

/** Latency in ms from `summary.weave.latency_ms`, or null while running. */
export function callLatency(call: Call): number | null {
  const weave = isObj(call.summary?.weave) ? call.summary.weave : {}
  return typeof weave.latency_ms === 'number' ? weave.latency_ms : null
}

/**
 * The cost of one model's usage: the sum of every `*_total_cost` it carries (prompt, completion, cache read and cache
 * creation, and any the API adds), or null without prices. The Traces table and the trace view both price by it, so a
 * call's cost reads the same on both.
 */
export function totalCost(entry: Record<string, unknown>): number | null {
  let total = 0
  let any = false
  for (const [k, v] of Object.entries(entry)) {
    if (k.endsWith('_total_cost') && typeof v === 'number') {
      total += v
      any = true
    }
  }
  return any ? total : null
}

/** The name a call is shown by: its display name, else the op's name without the `weave:///…/op/` ref and version. */
export function callName(call: Pick<Call, 'op_name' | 'display_name'>): string {
  if (call.display_name) return call.display_name
  const ref = /^weave:\/\/\/[^/]+\/[^/]+\/op\/([^:/]+)(?::[^/]*)?$/.exec(call.op_name)
  return ref?.[1] ?? call.op_name
}
