import {
  type CallListing,
  type CallWalkOptions,
  listingPartitions,
  traceOrderHolds,
  walkCalls,
} from '#shared/db/call-listing'
import { getCallParts } from '#shared/db/call-repository'
import type { CallsFilter, SortBy } from '#shared/schemas/call'
import type { CallParts } from '#shared/schemas/call-item'
import type { Query } from '#shared/schemas/query'
import { type LoadedCall, loadCall } from '#shared/tracing/call-view'
import { microsToStored, parseDatetimeMicros } from '#shared/tracing/time'

// Where `calls/stream_query`'s candidates come from (shared/tracing/call-query.ts): the most selective index for the
// filter, the bounds a query puts on its walk, and the order that walk yields, which decides whether it can stop early.

/** Where a selection's candidate calls come from: calls by id, or an index listing walked in its order. */
export type Source = { kind: 'ids'; ids: readonly string[] } | { kind: 'listing'; listing: CallListing }

// Whether a source walks traces (call-id order) rather than a `started_at` ordered listing.
export const walksTraces = (source: Source) => source.kind === 'listing' && source.listing.kind === 'traces'

export const nonEmpty = (l: readonly string[] | null | undefined) =>
  l === null || l === undefined || l.length === 0 ? undefined : l

/** The `started_at` range a query's top-level conjuncts bound the project's timeline walk to. */
export function timeBounds(query: Query | null | undefined): { startedFrom?: string; startedTo?: string } {
  if (!query) return {}
  const conjuncts = query.expr.k === 'and' ? query.expr.ops : [query.expr]
  let lo: number | undefined
  let hi: number | undefined
  for (const c of conjuncts) {
    if (c.k !== 'cmp' || c.op === 'eq') continue
    let { op } = c
    let field = c.a
    let lit = c.b
    if (c.a.k === 'lit' && c.b.k === 'get') {
      field = c.b
      lit = c.a
      op = ({ gt: 'lt', gte: 'lte', lt: 'gt', lte: 'gte' } as const)[op]
    }
    if (field.k !== 'get' || field.path !== 'started_at' || lit.k !== 'lit') continue
    const micros = parseDatetimeMicros(lit.v)
    if (micros === undefined) continue
    if (op === 'gt' || op === 'gte') lo = lo === undefined ? micros : Math.max(lo, micros)
    else hi = hi === undefined ? micros : Math.min(hi, micros)
  }
  return {
    ...(lo === undefined ? {} : { startedFrom: microsToStored(lo) }),
    ...(hi === undefined ? {} : { startedTo: microsToStored(hi) }),
  }
}

/**
 * The greatest `id > x` / `id >= x` bound among the query's top-level conjuncts: the trace walk starts at key `x`,
 * which every key of a greater id follows (the query still decides which calls are kept).
 */
export function idFrom(query: Query | null | undefined): string | undefined {
  if (!query) return undefined
  let from: string | undefined
  for (const c of query.expr.k === 'and' ? query.expr.ops : [query.expr]) {
    if (c.k !== 'cmp' || (c.op !== 'gt' && c.op !== 'gte')) continue
    if (c.a.k !== 'get' || c.a.path !== 'id' || c.b.k !== 'lit' || typeof c.b.v !== 'string') continue
    if (traceOrderHolds(c.b.v) && (from === undefined || c.b.v > from)) from = c.b.v
  }
  return from
}

// A listing walks one index partition per value (an op name: one per shard), all merged in order. Past this many
// partitions the project's timeline (8 shards), with the filter applied in memory, is the cheaper walk: a filter of
// 1,000 op names sent 8,000 Queries at once and stalled the server for every tenant (QA), 20,000 ran it out of memory.
const MAX_LISTING_PARTITIONS = 64

/** The most selective source for a filter: its call ids, else the first listing of a bounded size, else the timeline. */
export function chooseSource(f: CallsFilter): Source {
  const callIds = nonEmpty(f.call_ids)
  if (callIds) return { kind: 'ids', ids: callIds }
  const traceIds = nonEmpty(f.trace_ids)
  const parentIds = nonEmpty(f.parent_ids)
  const threadIds = nonEmpty(f.thread_ids)
  const opNames = nonEmpty(f.op_names)
  const listings: (CallListing | undefined)[] = [
    traceIds && { kind: 'traces', traceIds },
    parentIds && { kind: 'parents', parentIds },
    threadIds && { kind: 'threads', threadIds },
    opNames && { kind: 'ops', opNames },
    f.trace_roots_only ? { kind: 'roots' } : undefined,
  ]
  const listing = listings.find((l) => l !== undefined && listingPartitions(l) <= MAX_LISTING_PARTITIONS)
  return { kind: 'listing', listing: listing ?? { kind: 'timeline' } }
}

async function loadCalls(parts: Iterable<CallParts>): Promise<LoadedCall[]> {
  const calls = await Promise.all([...parts].map(loadCall))
  return calls.filter((c): c is LoadedCall => c !== undefined)
}

/**
 * Yields candidate calls page by page in the source's order (`started_at, id`, reversed with `descending`; a trace
 * by call id).
 */
export async function* candidates(project: string, source: Source, walk: CallWalkOptions, ends = true) {
  if (source.kind === 'ids') {
    // In pages of ids, so a long id list (calls found through their feedback) streams and a limited walk stops.
    for (let i = 0; i < source.ids.length; i += IDS_PAGE) {
      const ids = source.ids.slice(i, i + IDS_PAGE)
      const read = { parts: ends ? ('both' as const) : ('start' as const), lean: walk.lean === true }
      yield await loadCalls((await getCallParts(project, ids, read)).values())
    }
    return
  }
  // Without ends (a count whose query reads no end field), the walk reads no end part by key either.
  const options = ends ? walk : { ...walk, startsOnly: true }
  for await (const page of walkCalls(project, source.listing, options)) yield await loadCalls(page)
}

const IDS_PAGE = 1000

// The order of the call indexes' sort key (`<started_at>#<id>`) that a requested order follows: the default and
// `started_at` ascending walk it forwards; `started_at` descending walks it backwards (ties then still need the id
// order the sort gives them, see iterateCalls); anything else needs every candidate.
function indexOrder(sortBy: SortBy[] | null | undefined): 'asc' | 'desc' | undefined {
  if (sortBy === null || sortBy === undefined) return 'asc'
  if (sortBy.length !== 1 || sortBy[0]?.field !== 'started_at') return undefined
  return sortBy[0].direction === 'desc' ? 'desc' : 'asc'
}

/**
 * The order a source's walk yields that the requested order can follow: `[]` (no order) takes any walk order; the
 * trace index is ordered by call id (a single trace only: several are walked one after the other).
 */
export function walkOrder(source: Source, sortBy: SortBy[] | null | undefined): 'asc' | 'desc' | 'id' | undefined {
  if (sortBy !== null && sortBy !== undefined && sortBy.length === 0) return 'asc'
  if (source.kind === 'ids') return undefined
  if (source.listing.kind !== 'traces') return indexOrder(sortBy)
  const byId = sortBy?.length === 1 && sortBy[0]?.field === 'id' && sortBy[0].direction === 'asc'
  return source.listing.traceIds.length === 1 && byId ? 'id' : undefined
}

// Reading calls by id beats an index walk unless the walk can stop early (a limit, in an order the walk yields) and
// the ids are many (each costs two keys of a BatchGetItem).
const IDS_SOURCE_MAX = 10_000

/** The source narrowed to the calls that feedback or queue fields allow (`callIds`), read by id when that is cheaper. */
export function restrictSource(
  base: Source,
  callIds: readonly string[] | undefined,
  f: CallsFilter,
  sortBy: SortBy[] | null | undefined,
  wanted: number | undefined,
): Source {
  if (callIds === undefined) return base
  if (base.kind === 'ids') {
    const allowed = new Set(callIds)
    return { kind: 'ids', ids: base.ids.filter((id) => allowed.has(id)) }
  }
  const walkStops = wanted !== undefined && walkOrder(base, sortBy) !== undefined
  if (walkStops && callIds.length > IDS_SOURCE_MAX) return base
  const calls = nonEmpty(f.call_ids)
  return { kind: 'ids', ids: calls ? callIds.filter((id) => calls.includes(id)) : callIds }
}
