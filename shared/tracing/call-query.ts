import { type CallWalkOptions, traceOrderHolds } from '#shared/db/call-listing'
import { BadRequestError } from '#shared/errors/http-error'
import type { CallsFilter, SortBy } from '#shared/schemas/call'
import type { Query } from '#shared/schemas/query'
import { expandRefs, objectRefReader, type RefReader, readsThroughExpansion } from '#shared/tracing/call-expand'
import {
  assertQueryField,
  assertSortField,
  callColumn,
  callField,
  compareKeys,
  type SortKey,
  sortKey,
} from '#shared/tracing/call-fields'
import { compileFilter } from '#shared/tracing/call-filter'
import { type CallRelations, parseRelatedField, passesRelations } from '#shared/tracing/call-related-fields'
import { planCallRelations } from '#shared/tracing/call-relations'
import {
  candidates,
  chooseSource,
  idFrom,
  nonEmpty,
  restrictSource,
  timeBounds,
  walkOrder,
  walksTraces,
} from '#shared/tracing/call-source'
import type { LoadedCall } from '#shared/tracing/call-view'
import { matches, queryFields } from '#shared/tracing/query-eval'

/**
 * Selects calls as `calls/stream_query` does: the most selective index for the filter (call ids, trace, parent,
 * thread, op, roots, else the project timeline bounded by any `started_at` range in the query), then every filter and
 * the query applied in memory, then ordering, offset and limit. Ordered by `started_at` (the default, ascending or
 * descending) the walk stops as soon as `offset + limit` calls matched, so a limited query never reads the whole
 * project. One trace is walked in its index's order, the call id: ordered by `id` ascending (or `[]`, no order) a
 * limited trace read stops early too, and an `id` lower bound in the query starts the walk there (the console pages
 * through a large trace that way).
 */

/** What to select. */
export type CallSelection = {
  project: string
  filter?: CallsFilter | null | undefined
  query?: Query | null | undefined
  /** null/undefined → `started_at, id`; [] → index order. */
  sortBy?: SortBy[] | null | undefined
  offset?: number | null | undefined
  limit?: number | null | undefined
  /** Skip the large JSON columns when neither filter, query nor sort needs them (usage roll-ups, counts). */
  lean?: boolean
  /**
   * The columns the caller will render (`columns` of `calls/stream_query`): when none of them is a large JSON column
   * (inputs, output, attributes), those are not read either, as with `lean`.
   */
  columns?: readonly string[] | null | undefined
  /** `expand_columns`: query and sort paths through these columns read the referenced objects. */
  expandColumns?: readonly string[] | null | undefined
  /** Reads refs for `expandColumns` (defaults to the project's objects). */
  refs?: RefReader
  /**
   * The caller reads only start-part fields of the selected calls (counts, trace sizes): calls fetched by id skip
   * their end parts unless the filter, query or sort reads one.
   */
  startFieldsOnly?: boolean
}

const STORED_DATES = new Set(['started_at', 'ended_at', 'deleted_at'])

// Stored datetimes are fixed-width UTC strings, so they sort as strings without being parsed; ids sort as strings.
function keyOf(call: LoadedCall, field: string, relations: CallRelations | undefined): SortKey {
  if (field === 'id') return [0, 1, call.id]
  if (STORED_DATES.has(field)) {
    const stored = (call as Record<string, unknown>)[field] as string | null
    return stored === null ? [1, 0, ''] : [0, 1, stored]
  }
  return sortKey(callField(call, field, relations))
}

// Sort keys are computed once per call, not once per comparison (a 10,000-call trace is sorted on every roll-up).
function sortCalls(
  calls: LoadedCall[],
  views: LoadedCall[],
  sortBy: SortBy[] | null | undefined,
  relations?: CallRelations,
): LoadedCall[] {
  if (sortBy !== null && sortBy !== undefined && sortBy.length === 0) return calls
  const keys: SortBy[] = sortBy ?? [{ field: 'started_at', direction: 'asc' }]
  const all = keys.some((k) => k.field === 'id') ? keys : [...keys, { field: 'id', direction: 'asc' as const }]
  const keyed = calls.map((call, i) => ({
    call,
    keys: all.map((k) => keyOf(views[i] as LoadedCall, k.field, relations)),
  }))
  keyed.sort((a, b) => {
    for (let i = 0; i < all.length; i++) {
      const c = compareKeys(a.keys[i] as SortKey, b.keys[i] as SortKey, all[i]?.direction === 'desc')
      if (c !== 0) return c
    }
    return 0
  })
  return keyed.map((k) => k.call)
}

const LARGE_COLUMNS = ['inputs', 'output', 'attributes']
// What only a call's end part holds (the derived `summary.weave.*` fields read it too).
const END_FIELDS = new Set(['ended_at', 'exception', 'output', 'summary', 'output_refs', 'wb_run_step_end'])

function readsEnds(sel: CallSelection): boolean {
  if (nonEmpty(sel.filter?.output_refs)) return true
  return selectionPaths(sel).some((p) => parseRelatedField(p) === undefined && END_FIELDS.has(p.split('.', 1)[0] ?? ''))
}

const selectionPaths = (sel: CallSelection) => [
  ...(sel.query ? queryFields(sel.query.expr) : []),
  ...(sel.sortBy ?? []).map((s) => s.field),
]

function rendersNoLargeColumn(columns: readonly string[] | null | undefined): boolean {
  if (columns === null || columns === undefined || columns.length === 0) return false
  return !columns.some((c) => LARGE_COLUMNS.includes(callColumn(c)))
}

function needsLargeColumns(sel: CallSelection): boolean {
  return selectionPaths(sel).some((p) => LARGE_COLUMNS.includes(p.split('.', 1)[0] ?? ''))
}

// Calls as the query and sort see them: with refs expanded when a path reads through an expanded column. The views
// are only evaluated; the calls themselves are yielded unchanged.
function viewer(sel: CallSelection): (page: LoadedCall[]) => Promise<LoadedCall[]> {
  const columns = sel.expandColumns ?? []
  if (columns.length === 0 || !readsThroughExpansion(selectionPaths(sel), columns)) return async (page) => page
  const refs = sel.refs ?? objectRefReader(sel.project)
  return (page) => expandRefs(page, columns, refs)
}

/**
 * Yields the selected calls in order, after offset and limit, chunk by chunk. When the chosen index already yields the
 * requested order (`started_at` ascending) calls are yielded as the walk reaches them, so a large result streams in
 * bounded memory; any other order collects the candidates and sorts them first. `filter.thread_ids = []` selects
 * nothing.
 */
export async function* iterateCalls(sel: CallSelection): AsyncGenerator<LoadedCall[]> {
  // Checked before anything is read, whatever the data, in the reference's order (`calls_query_stream`): columns and
  // sort fields as they are added, then limit and offset, then query paths as the SQL is compiled.
  for (const c of sel.columns ?? []) callColumn(c)
  for (const s of sel.sortBy ?? []) assertSortField(s.field)
  if ((sel.limit ?? 0) < 0) throw new BadRequestError('Limit must be a positive integer')
  if ((sel.offset ?? 0) < 0) throw new BadRequestError('Offset must be a positive integer')
  if (sel.query) for (const path of queryFields(sel.query.expr)) assertQueryField(path)
  const f = sel.filter ?? {}
  if (f.thread_ids !== null && f.thread_ids !== undefined && f.thread_ids.length === 0) return
  const offset = sel.offset ?? 0
  const wanted = sel.limit === null || sel.limit === undefined ? undefined : offset + sel.limit
  if (wanted === 0) return
  // Feedback and queue fields: their rows are read first; when they bound the calls that can match, those calls
  // are read by id instead of walking an index (docs/data-model.md, "Tracing: calls").
  const { relations, callIds } = await planCallRelations(sel.project, sel.query, sel.sortBy)
  const source = restrictSource(chooseSource(f), callIds, f, sel.sortBy, wanted)
  const order = walkOrder(source, sel.sortBy)
  const inOrder = order === 'asc' || order === 'id'
  // Newest first with a limit (the console's default view): the index walked backwards, stopping early.
  const newestFirst = order === 'desc' && wanted !== undefined
  // The walk can stop after `wanted` calls only when it yields them in the order asked for.
  const expect = (inOrder || newestFirst) && wanted !== undefined ? wanted : undefined
  const lean = (sel.lean === true || rendersNoLargeColumn(sel.columns)) && !needsLargeColumns(sel)
  const view = viewer(sel)
  const passesFilter = compileFilter(f)
  const keep = (call: LoadedCall) =>
    passesFilter(call) &&
    passesRelations(call.id, relations) &&
    (!sel.query || matches(sel.query, (path) => callField(call, path, relations)))
  // The kept calls of a page, each with the view the query saw (the sort reads the same view).
  const kept = async (page: LoadedCall[]) => {
    const views = await view(page)
    const calls: LoadedCall[] = []
    const seen: LoadedCall[] = []
    page.forEach((call, i) => {
      const v = views[i] as LoadedCall
      if (keep(v)) {
        calls.push(call)
        seen.push(v)
      }
    })
    return { calls, views: seen }
  }
  const fromId = walksTraces(source) ? idFrom(sel.query) : undefined
  const bounds = walksTraces(source) ? (fromId === undefined ? {} : { fromId }) : timeBounds(sel.query)
  const walkOptions: CallWalkOptions = {
    ...bounds,
    descending: newestFirst,
    lean,
    ...(expect === undefined ? {} : { expect }),
  }
  const ends = sel.startFieldsOnly !== true || readsEnds(sel)
  const pages = candidates(sel.project, source, walkOptions, ends)
  if (newestFirst) {
    // Calls come newest first; ties on started_at come in descending id order, while the sort orders them by id
    // ascending. So the walk stops only once `wanted` calls matched and the started_at of the last of them is behind
    // it: every call that can rank among the first `wanted` has then been seen, and sorting those gives the answer.
    const out: LoadedCall[] = []
    const outViews: LoadedCall[] = []
    let boundary: string | undefined
    walk: for await (const page of pages) {
      const k = await kept(page)
      for (let i = 0; i < k.calls.length; i++) {
        const call = k.calls[i] as LoadedCall
        if (boundary !== undefined && call.started_at !== boundary) break walk
        out.push(call)
        outViews.push(k.views[i] as LoadedCall)
        if (boundary === undefined && out.length >= (wanted as number)) boundary = call.started_at
      }
    }
    const sorted = sortCalls(out, outViews, sel.sortBy, relations).slice(offset, wanted)
    for (let i = 0; i < sorted.length; i += 500) yield sorted.slice(i, i + 500)
    return
  }
  if (!inOrder) {
    const out: LoadedCall[] = []
    const outViews: LoadedCall[] = []
    for await (const page of pages) {
      const k = await kept(page)
      out.push(...k.calls)
      outViews.push(...k.views)
    }
    const sorted = sortCalls(out, outViews, sel.sortBy, relations).slice(offset, wanted)
    for (let i = 0; i < sorted.length; i += 500) yield sorted.slice(i, i + 500)
    return
  }
  let seen = 0
  const take = (calls: LoadedCall[]) => {
    const chunk: LoadedCall[] = []
    for (const call of calls) {
      seen++
      if (seen > offset && (wanted === undefined || seen <= wanted)) chunk.push(call)
    }
    return chunk
  }
  // A trace walked by id: once an id that the index may order differently shows up, the rest is sorted in memory
  // (every call already yielded still comes first, its id being plain).
  let rest: { calls: LoadedCall[]; views: LoadedCall[] } | undefined
  for await (const page of pages) {
    if (order === 'id' && rest === undefined && page.some((c) => !traceOrderHolds(c.id)))
      rest = { calls: [], views: [] }
    const k = await kept(page)
    if (rest !== undefined) {
      rest.calls.push(...k.calls)
      rest.views.push(...k.views)
      continue
    }
    const chunk = take(k.calls)
    if (chunk.length > 0) yield chunk
    if (wanted !== undefined && seen >= wanted) return
  }
  if (rest === undefined) return
  const chunk = take(sortCalls(rest.calls, rest.views, sel.sortBy, relations))
  for (let i = 0; i < chunk.length; i += 500) yield chunk.slice(i, i + 500)
}

/** Returns the selected calls in order, after offset and limit (see `iterateCalls`). */
export async function selectCalls(sel: CallSelection): Promise<LoadedCall[]> {
  const out: LoadedCall[] = []
  for await (const chunk of iterateCalls(sel)) out.push(...chunk)
  return out
}
