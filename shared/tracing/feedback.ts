import { assertProjectAccess } from '#shared/auth/authenticate'
import { isCallLive } from '#shared/db/call-liveness'
import type { FeedbackSource } from '#shared/db/feedback-keys'
import {
  assertFeedbackFits,
  claimRetryKey,
  deleteFeedback,
  getFeedback,
  listFeedback,
  putFeedback,
} from '#shared/db/feedback-repository'
import { registerProject } from '#shared/db/project-repository'
import { BadRequestError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type { FeedbackCreateReq, FeedbackQueryReq, FeedbackReplaceReq, FeedbackRow } from '#shared/schemas/feedback'
import type { FeedbackCreateRes } from '#shared/schemas/feedback-response'
import type { SortBy } from '#shared/schemas/obj'
import type { Operand, Query } from '#shared/schemas/query'
import { compareKeys, type SortKey } from '#shared/tracing/call-fields'
import { callIdOfRef, projectOfRef } from '#shared/tracing/call-ref'
import {
  assertFeedbackFields,
  feedbackField,
  feedbackSortKey,
  pageFeedback,
  unqualifiedFeedbackField,
} from '#shared/tracing/feedback-fields'
import { assertQueueLive } from '#shared/tracing/feedback-queue'
import { validateFeedback } from '#shared/tracing/feedback-validate'
import { uuidv7 } from '#shared/tracing/ids'
import { matches, purgeIdsOf } from '#shared/tracing/query-eval'

const toRes = (row: FeedbackRow): FeedbackCreateRes => ({
  id: row.id,
  created_at: row.created_at,
  wb_user_id: row.wb_user_id,
  payload: row.payload,
})

async function buildRow(principal: Principal, req: FeedbackCreateReq, id: string): Promise<FeedbackRow> {
  assertProjectAccess(principal, req.project_id)
  // Refs into an entity the caller does not belong to are refused, as Weave's adapter refuses them (`projectOfRef`).
  for (const ref of [req.weave_ref, req.annotation_ref, req.runnable_ref, req.call_ref, req.trigger_ref]) {
    const project = projectOfRef(ref)
    if (project !== undefined) assertProjectAccess(principal, project)
  }
  const payload = await validateFeedback(req)
  if (req.queue_id != null) await assertQueueLive(req.project_id, req.queue_id)
  const row: FeedbackRow = {
    id,
    project_id: req.project_id,
    weave_ref: req.weave_ref,
    wb_user_id: principal.userId,
    creator: req.creator ?? null,
    created_at: new Date().toISOString(),
    feedback_type: req.feedback_type,
    payload,
    annotation_ref: req.annotation_ref ?? null,
    runnable_ref: req.runnable_ref ?? null,
    call_ref: req.call_ref ?? null,
    trigger_ref: req.trigger_ref ?? null,
    queue_id: req.queue_id ?? null,
    scorer_tags: req.scorer_tags,
    scorer_tag_reasons: req.scorer_tag_reasons,
    scorer_tag_confidences: req.scorer_tag_confidences,
    scorer_ratings: req.scorer_ratings,
    scorer_rating_reasons: req.scorer_rating_reasons,
    scorer_rating_confidences: req.scorer_rating_confidences,
    span_agent_name: req.span_agent_name,
    span_agent_version: req.span_agent_version,
    span_status_code: req.span_status_code,
    span_conversation_id: req.span_conversation_id,
    span_trace_id: req.span_trace_id,
    scorer_trace_id: req.scorer_trace_id,
  }
  // Before any write of the request (a batch builds every row first): a refused row leaves nothing behind.
  assertFeedbackFits(row)
  return row
}

// Whether the row's call (a call ref into its own project) is live now, read before the row is written: counts by
// feedback take a flagged row's call as started, and a deletion after this read has left its marker for them
// (docs/data-model.md, "Counting calls by feedback").
async function callLive(row: FeedbackRow): Promise<boolean> {
  const callId = callIdOfRef(row.project_id, row.weave_ref)
  return callId !== undefined && isCallLive(row.project_id, callId)
}

async function store(row: FeedbackRow, clientId: string | null | undefined, retryKey: string | undefined) {
  const [live] = await Promise.all([callLive(row), registerProject(row.project_id)])
  const id = clientId == null && retryKey !== undefined ? await claimRetryKey(row.project_id, retryKey, row.id) : row.id
  return toRes((await putFeedback({ ...row, id }, { callLive: live })).row)
}

/**
 * `feedback/create`. Idempotent: a client `id` is the key; without one, the client's retry id (`X-Weave-Retry-Id`,
 * shared by every attempt of one request) fixes the generated id, so a retried create returns the first row.
 */
export async function createFeedback(
  principal: Principal,
  req: FeedbackCreateReq,
  retryKey?: string,
): Promise<FeedbackCreateRes> {
  const row = await buildRow(principal, req, req.id ?? uuidv7())
  return store(row, req.id, retryKey)
}

/** `feedback/batch/create`: validates every item first (nothing is written if one fails), then creates in order. */
export async function createFeedbackBatch(principal: Principal, batch: FeedbackCreateReq[], retryKey?: string) {
  const rows: FeedbackRow[] = []
  for (const req of batch) rows.push(await buildRow(principal, req, req.id ?? uuidv7()))
  const res: FeedbackCreateRes[] = []
  for (const [i, row] of rows.entries()) {
    res.push(await store(row, batch[i]?.id, retryKey === undefined ? undefined : `${retryKey}#${i}`))
  }
  return { res }
}

/** `feedback/replace`: validates the new row, purges `feedback_id`, creates the new row under a new id. */
export async function replaceFeedback(principal: Principal, req: FeedbackReplaceReq, retryKey?: string) {
  const { feedback_id: old, ...create } = req
  const row = await buildRow(principal, { ...create, id: null }, uuidv7())
  await deleteFeedback(req.project_id, old)
  return store(row, null, retryKey === undefined ? undefined : `replace#${retryKey}`)
}

/** `feedback/purge`: permanent delete by id only (`$eq` on `id`, or an `$or` of them). */
export async function purgeFeedback(project: string, query: Query): Promise<void> {
  const ids = purgeIdsOf(query)
  if (ids === undefined) throw new BadRequestError('Can only purge feedback by specifying one or more feedback ids')
  for (const id of new Set(ids)) await deleteFeedback(project, id)
}

// Rows tied on every requested key come in creation order (ClickHouse leaves their order open).
const TIE_BREAK: SortBy[] = [
  { field: 'created_at', direction: 'asc' },
  { field: 'id', direction: 'asc' },
]

// Uses the narrowest stored listing an `$eq` on the top level (or inside a top-level `$and`) allows.
function sourceFor(query: Query | undefined): { source: FeedbackSource; id?: string } {
  const expr = query?.expr
  const terms: Operand[] = expr === undefined ? [] : expr.k === 'and' ? expr.ops : [expr]
  for (const term of terms) {
    if (term.k !== 'cmp' || term.op !== 'eq' || term.a.k !== 'get' || term.b.k !== 'lit') continue
    const field = unqualifiedFeedbackField(term.a.path)
    const value = term.b.v
    if (typeof value !== 'string') continue
    if (field === 'id') return { source: { kind: 'project' }, id: value }
    if (field === 'weave_ref') return { source: { kind: 'ref', weaveRef: value } }
    if (field === 'feedback_type') return { source: { kind: 'type', feedbackType: value } }
  }
  return { source: { kind: 'project' } }
}

/**
 * `feedback/query`: rows matching the query, sorted (`sort_by`, then `created_at`, `id`), paged; `total_count` before
 * paging. Every named field is checked before anything is read.
 */
export async function queryFeedback(req: FeedbackQueryReq) {
  assertFeedbackFields(req)
  const query = req.query ?? undefined
  const { source, id } = sourceFor(query)
  let rows: FeedbackRow[]
  if (id !== undefined) {
    const row = await getFeedback(req.project_id, id)
    rows = row === undefined ? [] : [row]
  } else rows = await listFeedback(req.project_id, source)
  if (query !== undefined) rows = rows.filter((r) => matches(query, (p) => feedbackField(r, p)))
  const sorts = [...(req.sort_by ?? []), ...TIE_BREAK]
  const keyed = rows.map((row) => ({ row, keys: sorts.map((s) => feedbackSortKey(row, s.field)) }))
  keyed.sort((a, b) => {
    for (const [i, s] of sorts.entries()) {
      const c = compareKeys(a.keys[i] as SortKey, b.keys[i] as SortKey, s.direction === 'desc')
      if (c !== 0) return c
    }
    return 0
  })
  return pageFeedback(
    keyed.map((k) => k.row),
    req,
  )
}
