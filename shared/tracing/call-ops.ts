import { traceStorageSize, walkCalls } from '#shared/db/call-listing'
import { recordCallDeletions } from '#shared/db/call-liveness'
import { getCallParts, putPendingDisplayName, setCallDisplayName } from '#shared/db/call-repository'
import { listFeedback } from '#shared/db/feedback-repository'
import { MAX_ITEM_BYTES } from '#shared/db/item-size'
import { BadRequestError, PayloadTooLargeError } from '#shared/errors/http-error'
import type { CallParts } from '#shared/schemas/call-item'
import { awaitsUncount, deleteCountingCalls } from '#shared/tracing/call-count'
import { expandRefs, objectRefReader, type RefReader } from '#shared/tracing/call-expand'
import { callColumn } from '#shared/tracing/call-fields'
import { type LoadedCall, loadCall, renderCall } from '#shared/tracing/call-view'
import { callCosts, loadPrices } from '#shared/tracing/costs'
import { microsToStored } from '#shared/tracing/time'

/** Most call ids one `calls/delete` accepts. */
export const MAX_DELETE_IDS = 1000

/** Read options shared by `call/read` and `calls/stream_query`. */
export type CallOutputOptions = {
  include_costs?: boolean
  include_storage_size?: boolean
  include_total_storage_size?: boolean
  include_feedback?: boolean
  columns?: readonly string[] | null | undefined
  expand_columns?: readonly string[] | null | undefined
  return_expanded_column_values?: boolean
}

// The `FeedbackDict` keys (docs/tracing.md §7.2) of a call's feedback rows, oldest first.
async function callFeedback(project: string, id: string): Promise<Record<string, unknown>[]> {
  const rows = await listFeedback(project, { kind: 'ref', weaveRef: `weave:///${project}/call/${id}` })
  return rows.map((r) => ({
    id: r.id,
    feedback_type: r.feedback_type,
    weave_ref: r.weave_ref,
    payload: r.payload,
    creator: r.creator,
    created_at: r.created_at,
    wb_user_id: r.wb_user_id,
  }))
}

const REQUIRED_COLUMNS = ['id', 'trace_id', 'project_id', 'op_name', 'started_at']

/**
 * The set of top-level keys to return for a `columns` list (docs/tracing.md §7.4), or undefined for all. Feedback
 * keeps `summary`, which holds it: the reference creates `summary.weave` for it when the columns leave it out
 * (`hydrate_calls_with_feedback`).
 */
export function columnSet(
  columns: readonly string[] | null | undefined,
  options: { includeCosts: boolean; includeFeedback: boolean },
): Set<string> | undefined {
  if (columns === null || columns === undefined || columns.length === 0) return undefined
  const set = new Set([...REQUIRED_COLUMNS, ...columns.map(callColumn)])
  if (set.has('summary') || options.includeCosts)
    for (const c of ['ended_at', 'exception', 'display_name', 'summary']) set.add(c)
  if (options.includeFeedback) set.add('summary')
  set.add('storage_size_bytes')
  set.add('total_storage_size_bytes')
  return set
}

/**
 * Renders calls with the requested costs, feedback, storage sizes and expanded refs (prices read once per call; pass
 * one `refs` reader for a whole request so each referenced object is read once).
 */
export async function renderCalls(
  project: string,
  calls: readonly LoadedCall[],
  options: CallOutputOptions,
  refs: RefReader = objectRefReader(project),
): Promise<Record<string, unknown>[]> {
  const prices = options.include_costs ? await loadPrices(project) : undefined
  const columns = columnSet(options.columns, {
    includeCosts: options.include_costs === true,
    includeFeedback: options.include_feedback === true,
  })
  const rendered = await Promise.all(
    calls.map(async (call) =>
      renderCall(call, {
        ...(prices === undefined ? {} : { costs: callCosts(call, prices) }),
        ...(options.include_feedback ? { feedback: await callFeedback(project, call.id) } : {}),
        storageSize: options.include_storage_size === true,
        totalStorageSize:
          options.include_total_storage_size && call.parent_id === null
            ? await traceStorageSize(project, call.trace_id)
            : null,
        ...(columns === undefined ? {} : { columns }),
      }),
    ),
  )
  const expand = options.expand_columns ?? []
  if (expand.length === 0 || options.return_expanded_column_values === false) return rendered
  return expandRefs(rendered, expand, refs)
}

/** `call/read`: the call, or null when it does not exist or was deleted. */
export async function readCall(
  project: string,
  id: string,
  options: CallOutputOptions,
): Promise<Record<string, unknown> | null> {
  const call = await loadCall((await getCallParts(project, [id])).get(id) ?? {})
  if (call === undefined || call.deleted_at !== null) return null
  const [rendered] = await renderCalls(project, [call], options)
  return rendered ?? null
}

/**
 * `call/update`: sets the display name (an empty string clears it). A call whose start is not stored yet (the SDKs
 * send parts in batches, so a rename right after a call often comes first) keeps the name for its start, as Weave's
 * update part waits to be merged: the ingest storing the start applies it. Checked again after keeping it, so a start
 * stored meanwhile gets it too.
 */
export async function updateCallDisplayName(
  project: string,
  id: string,
  displayName: string | null | undefined,
): Promise<void> {
  if (displayName === null || displayName === undefined) {
    throw new BadRequestError('One of [display_name] is required for call update')
  }
  // Too large for any item, whatever else the call holds (DynamoDB counts UTF-8 bytes, dynalite characters).
  if (Buffer.byteLength(displayName, 'utf8') > MAX_ITEM_BYTES) {
    throw new PayloadTooLargeError('display_name is too large to store with the call')
  }
  const name = displayName === '' ? undefined : displayName
  let result = await setCallDisplayName(project, id, name)
  if (result === 'missing') {
    await putPendingDisplayName(project, id, displayName)
    result = await setCallDisplayName(project, id, name)
  }
  if (result === 'too-large') throw new PayloadTooLargeError('display_name is too large to store with the call')
}

// The start parts of a trace's calls, lean.
async function traceParts(project: string, traceId: string): Promise<Map<string, CallParts>> {
  const parts = new Map<string, CallParts>()
  const walk = walkCalls(project, { kind: 'traces', traceIds: [traceId] }, { lean: true, startsOnly: true })
  for await (const page of walk) for (const p of page) if (p.start !== undefined) parts.set(p.start.id, p)
  return parts
}

/**
 * `calls/delete`: soft-deletes the calls and all their descendants; returns how many calls this request deleted. A
 * deletion stays marked `uncount_pending` until the call counter shows it, so a retry (the client's, after a failed
 * counter write, or the SDK's, after a lost answer) takes it out of the count exactly once.
 */
export async function deleteCalls(project: string, ids: readonly string[], now = Date.now()): Promise<number> {
  if (ids.length > MAX_DELETE_IDS)
    throw new PayloadTooLargeError(`Cannot delete more than ${MAX_DELETE_IDS} calls at once`)
  if (ids.length === 0) return 0
  const roots = await getCallParts(project, ids, { parts: 'start' })
  const traces = new Set([...roots.values()].flatMap((p) => (p.start ? [p.start.trace_id] : [])))
  const children = new Map<string, string[]>()
  const live = new Set<string>()
  const uncounting = new Set<string>()
  for (const traceId of traces) {
    for (const [id, p] of await traceParts(project, traceId)) {
      if (p.start === undefined) continue
      if (p.start.deleted_at === undefined) live.add(id)
      else if (awaitsUncount(p.start)) uncounting.add(id)
      const parent = p.start.parent_id
      if (parent === undefined) continue
      const siblings = children.get(parent)
      if (siblings === undefined) children.set(parent, [id])
      else siblings.push(id)
    }
  }
  const doomed = new Set<string>()
  const stack = ids.filter((id) => roots.get(id)?.start !== undefined)
  while (stack.length > 0) {
    const id = stack.pop() as string
    if (doomed.has(id)) continue
    doomed.add(id)
    stack.push(...(children.get(id) ?? []))
  }
  const targets = [...doomed].filter((id) => live.has(id))
  const unsettled = [...doomed].filter((id) => uncounting.has(id))
  // Before any `deleted_at`: a call without a marker was never marked deleted, which counts by feedback rely on. Every
  // call reached gets one, so a retry also marks calls an earlier delete (or one made before markers) left without.
  await recordCallDeletions(project, [...doomed])
  return deleteCountingCalls(project, targets, unsettled, microsToStored(now * 1000))
}
