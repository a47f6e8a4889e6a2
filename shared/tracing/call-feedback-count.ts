import { readDeletedCallIds } from '#shared/db/call-liveness'
import { getCallParts } from '#shared/db/call-repository'
import type { Query } from '#shared/schemas/query'
import { assertQueryField } from '#shared/tracing/call-fields'
import { planCallRelations, selectsByFeedbackOnly } from '#shared/tracing/call-relations'
import { queryFields } from '#shared/tracing/query-eval'

/**
 * `calls/query_stats` whose query selects by feedback alone (docs/data-model.md, "Counting calls by feedback"). The
 * feedback read gives exactly the calls the query is true for; a count takes those that are started and not deleted.
 * A call one of whose rows is flagged `call_live` was started when that row was written (a start is never removed),
 * and it has been marked deleted since only if it has a deletion marker (written before any `deleted_at`): so it is
 * counted without being read, unless it has a marker. The other calls (no flagged row: rows written before their call
 * started or before flags existed, calls never started; and marked calls) are read by key as before.
 */

// A marker read costs a small part of a keyed read of a start (0.5 RCU): past this many markers per flagged call, the
// candidates are read by key instead of reading on.
const MARKERS_PER_CALL = 16

// Calls read by key per round, as the selection reads a list of ids.
const IDS_PAGE = 1000

/**
 * Whether `countCallsByFeedback` gives the count of a query (with no filter and no storage size asked for): every
 * top-level conjunct reads only feedback fields and is false or NULL without that feedback. Checks every path first,
 * as a selection does (422 for an unknown or malformed one).
 */
export function countsByFeedback(query: Query): boolean {
  for (const path of queryFields(query.expr)) assertQueryField(path)
  return selectsByFeedbackOnly(query)
}

/**
 * Counts the started, undeleted calls a feedback-only query (`countsByFeedback`) is true for, up to `limit + 1` when a
 * limit is given, reading by key only the calls no flagged row vouches for.
 */
export async function countCallsByFeedback(
  project: string,
  query: Query,
  limit: number | undefined,
): Promise<{ count: number; has_more: boolean }> {
  const { relations, callIds = [] } = await planCallRelations(project, query, [])
  const flagged = callIds.filter((id) => relations?.feedback.get(id)?.some((row) => row.call_live) === true)
  const deleted =
    flagged.length === 0 ? undefined : await readDeletedCallIds(project, flagged.length * MARKERS_PER_CALL)
  const live = new Set(deleted === undefined ? [] : flagged.filter((id) => !deleted.has(id)))
  const wanted = limit === undefined ? Number.POSITIVE_INFINITY : limit + 1
  let n = live.size
  const unknown = callIds.filter((id) => !live.has(id))
  for (let i = 0; i < unknown.length && n < wanted; i += IDS_PAGE) {
    const parts = await getCallParts(project, unknown.slice(i, i + IDS_PAGE), { parts: 'start', lean: true })
    for (const p of parts.values()) if (p.start !== undefined && p.start.deleted_at === undefined) n++
  }
  return limit === undefined ? { count: n, has_more: false } : { count: Math.min(n, limit), has_more: n > limit }
}
