import { createHash } from 'node:crypto'
import * as z from 'zod/mini'
import { assertProjectAccess } from '#shared/auth/authenticate'
import { getCallParts } from '#shared/db/call-repository'
import {
  assertQueueItemFits,
  claimQueueCall,
  getQueue,
  getQueueItem,
  listLiveQueues,
  listProgress,
  listQueueCallIds,
  listQueueItems,
  putQueue,
  putQueueItem,
  updateQueue,
} from '#shared/db/queue-repository'
import { claimRetryValue } from '#shared/db/retry-key-repository'
import { ConflictError, NotFoundError } from '#shared/errors/http-error'
import type {
  AnnotationQueue,
  QueueAddCallsBody,
  QueueCreateReq,
  QueueItem,
  QueuesQueryReq,
  QueueUpdateBody,
} from '#shared/schemas/annotation-queue'
import type { Principal } from '#shared/schemas/api-key'
import { projectOfRef } from '#shared/tracing/call-ref'
import { uuidv7 } from '#shared/tracing/ids'
import { ilikeMatcher } from '#shared/tracing/ilike'
import { renderDatetime } from '#shared/tracing/time'

const QUEUE_SORT_FIELDS = ['id', 'name', 'created_at', 'updated_at'] as const

const out = (q: AnnotationQueue): AnnotationQueue => ({ ...q, deleted_at: q.deleted_at ?? null })

const QueueRetrySchema = z.object({ id: z.string(), created_at: z.string() })

/**
 * Creates a queue owned by the authenticated user. With the client's retry id (`X-Weave-Retry-Id`, the same on every
 * attempt of one request) the first attempt's id and creation time are recorded and reused, so a retry stores or
 * finds the same queue instead of a second one. A put that meets a queue under its id succeeds when that queue is
 * this request's (same creator and creation time: a lost answer or an earlier attempt); another is a 409.
 */
export async function createQueue(userId: string, req: QueueCreateReq, retryKey?: string): Promise<{ id: string }> {
  let first = { id: uuidv7(), created_at: new Date().toISOString() }
  if (retryKey !== undefined) {
    const request = createHash('sha256').update(JSON.stringify(req)).digest('base64url')
    first = await claimRetryValue('queue', req.project_id, retryKey, first, QueueRetrySchema, request)
  }
  const queue: AnnotationQueue = {
    id: first.id,
    project_id: req.project_id,
    name: req.name,
    description: req.description,
    scorer_refs: req.scorer_refs,
    created_at: first.created_at,
    created_by: userId,
    updated_at: first.created_at,
  }
  const stored = await putQueue(queue)
  if (stored.created_by !== userId || stored.created_at !== first.created_at) {
    throw new ConflictError(`Queue ${first.id} already exists`)
  }
  return { id: first.id }
}

function compareBy(a: Record<string, unknown>, b: Record<string, unknown>, field: string): number {
  const x = String(a[field] ?? '')
  const y = String(b[field] ?? '')
  return x < y ? -1 : x > y ? 1 : 0
}

/** Sorts rows by the allowed `sort_by` fields (others ignored), then `id ASC`; `fallback` when none apply. */
export function sortRows<T extends { id: string }>(
  rows: T[],
  sortBy: readonly { field: string; direction: 'asc' | 'desc' }[] | null | undefined,
  allowed: readonly string[],
  fallback: readonly { field: string; direction: 'asc' | 'desc' }[],
): T[] {
  const given = (sortBy ?? []).filter((s) => allowed.includes(s.field))
  const keys = [...(given.length > 0 ? given : fallback), { field: 'id', direction: 'asc' as const }]
  return rows.sort((a, b) => {
    for (const k of keys) {
      const c = compareBy(a as Record<string, unknown>, b as Record<string, unknown>, k.field)
      if (c !== 0) return k.direction === 'desc' ? -c : c
    }
    return 0
  })
}

/** Live queues of a project, filtered by name, sorted, paged. */
export async function queryQueues(req: QueuesQueryReq): Promise<AnnotationQueue[]> {
  let queues = await listLiveQueues(req.project_id)
  if (req.name != null && req.name !== '') {
    const matches = ilikeMatcher(req.name)
    queues = queues.filter((q) => matches(q.name))
  }
  sortRows(queues, req.sort_by, QUEUE_SORT_FIELDS, [{ field: 'created_at', direction: 'desc' }])
  const start = req.offset ?? 0
  return queues.slice(start, req.limit == null ? undefined : start + req.limit).map(out)
}

/** One live queue; 404 `Queue {id} not found` when missing or deleted. */
export async function readQueue(project: string, queueId: string): Promise<AnnotationQueue> {
  const q = await getQueue(project, queueId)
  if (q === undefined || q.deleted_at != null) throw new NotFoundError(`Queue ${queueId} not found`)
  return out(q)
}

/** Changes the given fields of a live queue (none given: returns it unchanged). */
export async function updateQueueFields(
  project: string,
  queueId: string,
  body: QueueUpdateBody,
): Promise<AnnotationQueue> {
  const gone = () => new NotFoundError(`Queue ${queueId} not found or already deleted`)
  const fields: Parameters<typeof updateQueue>[2] = {}
  if (body.name != null) fields.name = body.name
  if (body.description != null) fields.description = body.description
  if (body.scorer_refs != null) fields.scorer_refs = body.scorer_refs
  if (Object.keys(fields).length === 0) {
    const q = await getQueue(project, queueId)
    if (q === undefined || q.deleted_at != null) throw gone()
    return out(q)
  }
  const updated = await updateQueue(project, queueId, { ...fields, updated_at: new Date().toISOString() })
  if (updated === undefined) throw gone()
  return out(updated)
}

/** Soft-deletes a live queue (its items stay). */
export async function deleteQueue(project: string, queueId: string): Promise<AnnotationQueue> {
  const now = new Date().toISOString()
  const deleted = await updateQueue(project, queueId, { deleted_at: now, updated_at: now })
  if (deleted === undefined) throw new NotFoundError(`Queue ${queueId} not found or already deleted`)
  return out(deleted)
}

/**
 * Adds calls as items: one item per found call without a live item (the call claim is a conditional write, so retries
 * and concurrent adds never create a second item for a call; a claim left by an attempt that failed before writing
 * its item is completed under the claimed item id). Unknown call ids are dropped; soft-deleted calls are added like
 * live ones (Weave's `make_queue_add_calls_fetch_calls_query` reads the calls with no `deleted_at` filter).
 */
export async function addQueueCalls(userId: string, project: string, queueId: string, body: QueueAddCallsBody) {
  const existing = await listQueueCallIds(project, queueId)
  const requested = [...new Set(body.call_ids)]
  const duplicates = requested.filter((id) => existing.has(id)).length
  const fresh = requested.filter((id) => !existing.has(id))
  const parts = await getCallParts(project, fresh)
  const itemOf = (callId: string, id: string, now: string): QueueItem | undefined => {
    const start = parts.get(callId)?.start
    if (start === undefined) return undefined
    const end = parts.get(callId)?.end
    return {
      id,
      project_id: project,
      queue_id: queueId,
      call_id: callId,
      call_started_at: renderDatetime(start.started_at),
      call_ended_at: end === undefined ? null : renderDatetime(end.ended_at),
      call_op_name: start.op_name ?? '',
      call_trace_id: start.trace_id ?? '',
      display_fields: body.display_fields,
      added_by: userId,
      created_at: now,
      created_by: userId,
      updated_at: now,
    }
  }
  // Every item is sized before the first claim: one too large for DynamoDB refuses the request with nothing written.
  const checkedAt = new Date().toISOString()
  for (const callId of fresh) {
    const item = itemOf(callId, uuidv7(), checkedAt)
    if (item !== undefined) assertQueueItemFits(item)
  }
  let added = 0
  for (const callId of fresh) {
    if (itemOf(callId, '', checkedAt) === undefined) continue
    const claim = await claimQueueCall(project, queueId, callId, uuidv7())
    if (!claim.created && (await getQueueItem(project, queueId, claim.itemId)) !== undefined) continue
    const item = itemOf(callId, claim.itemId, new Date().toISOString())
    if (item === undefined) continue
    if ((await putQueueItem(item)) === 'written') added++
  }
  return { added_count: added, duplicates }
}

/** Per requested queue (in order, repeats kept): live items and items completed or skipped by any annotator. */
export async function queueStats(project: string, queueIds: readonly string[]) {
  const cache = new Map<string, { queue_id: string; total_items: number; completed_items: number }>()
  for (const id of new Set(queueIds)) {
    const [items, progress] = await Promise.all([listQueueItems(project, id), listProgress(project, id)])
    const live = new Set(items.filter((i) => i.deleted_at == null).map((i) => i.id))
    const done = new Set(
      progress
        .filter((p) => live.has(p.item_id) && (p.annotation_state === 'completed' || p.annotation_state === 'skipped'))
        .map((p) => p.item_id),
    )
    cache.set(id, { queue_id: id, total_items: live.size, completed_items: done.size })
  }
  return {
    stats: queueIds.map((id) => ({ ...(cache.get(id) ?? { queue_id: id, total_items: 0, completed_items: 0 }) })),
  }
}

/** Refuses scorer refs into an entity the caller does not belong to (403), as Weave's adapter refuses them. */
export function assertScorerRefsOpen(principal: Principal, refs: readonly string[] | null | undefined): void {
  for (const ref of refs ?? []) {
    const project = projectOfRef(ref)
    if (project !== undefined) assertProjectAccess(principal, project)
  }
}
