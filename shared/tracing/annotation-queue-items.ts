import { getProgress, getQueueItem, listProgress, listQueueItems, writeProgress } from '#shared/db/queue-repository'
import { BadRequestError } from '#shared/errors/http-error'
import type { AnnotationState, ProgressRow, QueueItem, QueueItemsQueryBody } from '#shared/schemas/annotation-queue'
import { sortRows } from '#shared/tracing/annotation-queues'
import { microsToStored } from '#shared/tracing/time'

const ITEM_SORT_FIELDS = ['call_started_at', 'call_op_name', 'created_at', 'updated_at'] as const
const SETTABLE = ['in_progress', 'completed', 'skipped']

// Progress rows are ordered by update time; microseconds keep two annotators' updates in one millisecond apart.
const preciseNow = () => microsToStored(Math.round((performance.timeOrigin + performance.now()) * 1000))

/** `AnnotationQueueItemSchema`: the item with its computed state. */
export type QueueItemOut = QueueItem & {
  deleted_at: string | null
  annotation_state: AnnotationState
  annotator_user_id: string
  position_in_queue: number | null
}

// The item's state is its most recent progress row over all annotators (docs/tracing.md §15.2).
function withState(item: QueueItem, rows: readonly ProgressRow[]): QueueItemOut {
  let latest: ProgressRow | undefined
  for (const r of rows)
    if (r.item_id === item.id && (latest === undefined || r.updated_at > latest.updated_at)) latest = r
  return {
    ...item,
    deleted_at: item.deleted_at ?? null,
    annotation_state: latest?.annotation_state ?? 'unstarted',
    annotator_user_id: latest?.annotator_user_id ?? '',
    position_in_queue: null,
  }
}

/**
 * Items of a queue with their states: equality filters, position, state filter, sort, paging (docs/tracing.md §15.2).
 */
export async function queryQueueItems(
  project: string,
  queueId: string,
  body: QueueItemsQueryBody,
): Promise<QueueItemOut[]> {
  const [items, progress] = await Promise.all([listQueueItems(project, queueId), listProgress(project, queueId)])
  const f = body.filter ?? {}
  let rows = items
    .filter((i) => i.deleted_at == null)
    .filter(
      (i) =>
        (f.id == null || i.id === f.id) &&
        (f.call_id == null || i.call_id === f.call_id) &&
        (f.call_op_name == null || i.call_op_name === f.call_op_name) &&
        (f.call_trace_id == null || i.call_trace_id === f.call_trace_id) &&
        (f.added_by == null || i.added_by === f.added_by),
    )
    .map((i) => withState(i, progress))
  sortRows(rows, body.sort_by, ITEM_SORT_FIELDS, [{ field: 'created_at', direction: 'asc' }])
  if (body.include_position)
    rows.forEach((r, i) => {
      r.position_in_queue = i + 1
    })
  const states = f.annotation_states
  if (states != null && states.length > 0) rows = rows.filter((r) => states.includes(r.annotation_state))
  const start = body.offset ?? 0
  return rows.slice(start, body.limit == null ? undefined : start + body.limit)
}

/**
 * Moves the authenticated annotator's progress on an item (docs/tracing.md §15.3). Each write is conditional on the row
 * as read, so concurrent updates serialise: the loser re-reads and its transition is checked against the winner's
 * state.
 */
export async function updateItemProgress(
  annotator: string,
  project: string,
  queueId: string,
  itemId: string,
  state: string,
): Promise<QueueItemOut> {
  if (!SETTABLE.includes(state)) {
    throw new BadRequestError(`Invalid annotation_state '${state}'. Must be one of: in_progress, completed, skipped`)
  }
  const to = state as AnnotationState
  for (;;) {
    const row = await getProgress(project, queueId, itemId, annotator)
    if (row?.annotation_state === to) break
    if (row !== undefined && to === 'in_progress') {
      throw new BadRequestError(
        "Cannot transition to 'in_progress' when a record already exists. 'in_progress' can only be set on new items.",
      )
    }
    if (row !== undefined && row.annotation_state !== 'in_progress' && row.annotation_state !== 'unstarted') {
      throw new BadRequestError(
        `Invalid state transition from '${row.annotation_state}' to '${to}'. Only transitions from 'in_progress' or 'unstarted' are allowed.`,
      )
    }
    const item = await getQueueItem(project, queueId, itemId)
    if (item === undefined || item.deleted_at != null) {
      throw new BadRequestError(`Queue item '${itemId}' not found in queue '${queueId}'`)
    }
    if (await writeProgress(project, queueId, itemId, annotator, row?.annotation_state, to, preciseNow())) break
  }
  const item = await getQueueItem(project, queueId, itemId)
  if (item === undefined) throw new BadRequestError(`Failed to fetch queue item '${itemId}'`)
  return withState(item, await listProgress(project, queueId, itemId))
}
