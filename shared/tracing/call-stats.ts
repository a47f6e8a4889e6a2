import { ITEM_REQUESTS_IN_FLIGHT, mapInParallel } from '#shared/db/batch-write'
import { readCallCount } from '#shared/db/call-counter'
import { countStartedCalls, traceStorageSize, walkCalls } from '#shared/db/call-listing'
import { BadRequestError } from '#shared/errors/http-error'
import type { CallsFilter, CallsQueryStatsReq } from '#shared/schemas/call'
import type { CallsQueryStatsRes as CallsQueryStats } from '#shared/schemas/call-response'
import { countCallsByFeedback, countsByFeedback } from '#shared/tracing/call-feedback-count'
import { selectCalls } from '#shared/tracing/call-query'

function filterIsEmpty(f: CallsFilter | null | undefined): boolean {
  if (f === null || f === undefined) return true
  return Object.values(f).every(
    (v) => v === null || v === undefined || v === false || (Array.isArray(v) && v.length === 0),
  )
}

// `_is_minimal_filter`: no filter at all, or one whose every field is null (an empty list is a criterion there).
function filterIsMinimal(f: CallsFilter | null | undefined): boolean {
  return f === null || f === undefined || Object.values(f).every((v) => v === null || v === undefined)
}

// Probe 1 counts calls ever started in the project, deleted ones included (CH reads the raw table). Two are enough to
// tell `has_more` exactly.
const countAnyCalls = (project: string) => countStartedCalls(project, 2)

async function countRunLinkedCalls(project: string): Promise<number> {
  let n = 0
  for await (const page of walkCalls(project, { kind: 'timeline' }, { lean: true, startsOnly: true })) {
    n += page.filter((p) => p.start?.wb_run_id !== undefined && p.start.deleted_at === undefined).length
    if (n >= 2) break
  }
  return n
}

const probeResult = (n: number): CallsQueryStats => ({
  count: Math.min(n, 1),
  has_more: n > 1,
  total_storage_size_bytes: null,
})

/**
 * `calls/query_stats` (docs/tracing.md §7.7): the unfiltered count comes from the project's sharded counter (constant
 * time); the two ClickHouse `limit == 1` probes are existence checks; a query on feedback alone counts from the
 * feedback rows (`call-feedback-count.ts`); any other filter or query counts the selection, reading at most
 * `limit + 1` matching calls to decide `has_more`.
 */
export async function callsQueryStats(req: CallsQueryStatsReq): Promise<CallsQueryStats> {
  const limit = req.limit ?? undefined
  if (limit !== undefined && limit < 0) throw new BadRequestError('Limit must be greater than or equal to 0')
  const storage = req.include_total_storage_size
  if (req.filter?.thread_ids && req.filter.thread_ids.length === 0) {
    return { count: 0, has_more: false, total_storage_size_bytes: storage ? 0 : null }
  }
  // The reference's two `limit == 1` fast paths (`calls_query_builder/stats.py`, `_try_optimized_stats_query`):
  // only an absent filter makes the existence probe; an absent or all-null filter with a query makes the
  // runs-linked probe, which ignores the query.
  if (limit === 1 && !storage && req.filter == null && !req.query) {
    return probeResult(await countAnyCalls(req.project_id))
  }
  if (limit === 1 && !storage && req.query && filterIsMinimal(req.filter)) {
    return probeResult(await countRunLinkedCalls(req.project_id))
  }
  if (!storage && !req.query && filterIsEmpty(req.filter)) {
    const total = await readCallCount(req.project_id)
    const capped = limit === undefined ? total : Math.min(total, limit)
    return { count: capped, has_more: limit !== undefined && total > limit, total_storage_size_bytes: null }
  }
  // A query on feedback alone: the feedback rows and the deleted-call markers, not the calls (in the common case).
  if (!storage && req.query && filterIsEmpty(req.filter) && countsByFeedback(req.query)) {
    return { ...(await countCallsByFeedback(req.project_id, req.query, limit)), total_storage_size_bytes: null }
  }
  const calls = await selectCalls({
    project: req.project_id,
    filter: req.filter,
    query: req.query,
    sortBy: [],
    limit: limit === undefined ? undefined : limit + 1,
    lean: true,
    startFieldsOnly: true,
    expandColumns: req.expand_columns,
  })
  const kept = limit === undefined ? calls : calls.slice(0, limit)
  let size: number | null = null
  if (storage) {
    const roots = kept.filter((c) => c.parent_id === null)
    const sizes = await mapInParallel(roots, ITEM_REQUESTS_IN_FLIGHT, (c) =>
      traceStorageSize(req.project_id, c.trace_id),
    )
    size = sizes.reduce((a, b) => a + b, 0)
  }
  return { count: kept.length, has_more: limit !== undefined && calls.length > limit, total_storage_size_bytes: size }
}
