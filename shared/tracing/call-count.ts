import { randomUUID } from 'node:crypto'
import { ITEM_REQUESTS_IN_FLIGHT, mapInParallel, settleInParallel } from '#shared/db/batch-write'
import {
  type CallCount,
  clearUncountPending,
  countCalls,
  countedStarts,
  markCallDeleted,
  markStartCounted,
  pendingTokens,
  startCountStates,
} from '#shared/db/call-counter'
import { putCallParts, putStartsIfAbsent } from '#shared/db/call-repository'
import type { CallEndItem, CallStartItem } from '#shared/schemas/call-item'

/**
 * The count-each-call-once protocol: the project's count of live calls (`calls/query_stats` without a filter) kept
 * in step with the stored calls without transactions. Ingest (`call-ingest.ts`) and `calls/delete` (`call-ops.ts`)
 * call `storeCountingStarts` and `deleteCountingCalls`; nothing else writes the counter or the count marks. Storage:
 * `shared/db/call-counter.ts` (16 counter shards per project and the marks on start parts). docs/data-model.md,
 * "The call counter", walks through it step by step.
 *
 * Invariants:
 * - What is counted: every stored start part, once, until it is deleted; the end part never counts. A start stored
 *   with `counted: true` is in the count; a start stored without it was written by a request that deferred to
 *   another's token, and is counted by that request or healed (counted, then marked) here.
 * - When: a request counts (`ADD n`) its new starts under idempotency tokens (`+<id>`; `-<id>` for a deletion) added
 *   to a shard's `pending` set in the same update, conditional on none of them being pending there; it stores the
 *   starts only after counting, and releases its tokens only once the items show what it counted.
 * - Pending tokens: a pending token's delta is in `n` (a take-back that gives a token up is the same update as its
 *   release); only its holder releases it. While pending it is a lock on its call's count: another request meeting it
 *   neither counts the call nor marks it, and stores the start only if absent.
 * - Retries: each token is counted on the shard its call id picks, so any request carrying a call, a retry with the
 *   same body or one that re-batched it with other calls, meets the tokens of every earlier attempt there. A retry that read a call as new but counted it after the original stored it
 *   finds `counted` on re-reading (strongly) and takes its count back. A counter update whose answer was lost leaves
 *   its tokens pending for good (the SDK's retry takes them for another request's): the count includes those calls,
 *   which the request then stores without counting, so the count stays right.
 * - Failures: a request that fails after counting takes back the count of every start it did not store with
 *   `counted` (re-read strongly) before answering, then heals any such start a concurrent retry stored meanwhile; the
 *   deferring writer checks after its puts whether the tokens it deferred to are gone, and heals what was given up.
 * - Delete uncounts: a deletion sets `deleted_at` and `uncount_pending` (the request's id) in one conditional update,
 *   then counts `-<id>` on the shard the call id picks (every delete of a call meets there, whatever its body),
 *   re-reads, and clears `uncount_pending` on those still carrying it; one another request cleared is taken back. A
 *   deleted start still carrying `uncount_pending` is in the count: the next delete that reaches it uncounts it.
 * - Stated limits: a process dying between counting and releasing leaves its tokens pending for good (a few bytes
 *   each), its calls counted and stored by its retry (whatever the retry's batch) without counting; a take-back that
 *   fails too leaves the count ahead of what is stored until a retry stores those calls.
 */

const plus = (id: string) => `+${id}`
// A new start's part, its large columns stored on the way.
const build = (s: NewStart) => s.build()
const idOf = (token: string) => token.slice(1)

function failedOf<T>(ids: readonly string[], results: PromiseSettledResult<T>[]): string[] {
  return ids.filter((_, i) => results[i]?.status === 'rejected')
}

function firstRejection<T>(results: PromiseSettledResult<T>[]): unknown {
  return results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason
}

/** A start a request reads as new (no stored start): its id, and its part built on demand (its columns stored). */
export type NewStart = { id: string; build: () => Promise<CallStartItem> }

/** What one project's part of an ingest request writes. */
export type CountedWrite = {
  /** The starts read as new. */
  fresh: readonly NewStart[]
  /**
   * The request's end parts, built once the starts are settled: `raced` are the new starts another writer stored
   * (or is storing) instead, whose stored trace id may differ from the request's.
   */
  ends: (raced: readonly string[]) => Promise<CallEndItem[]>
}

/**
 * Stores a request's new starts and its ends, counting each new call once: counts the new starts under their
 * tokens, takes back those a counting writer already stored, stores the rest marked `counted` (with the ends, in one
 * batch write), stores starts whose token another request holds only if absent and unmarked, and releases its tokens.
 * A failure after counting takes its count back before it is thrown.
 */
export async function storeCountingStarts(project: string, write: CountedWrite): Promise<void> {
  const count = await countCalls(
    project,
    write.fresh.map((s) => plus(s.id)),
    1,
  )
  // The starts this request tried to store as counted, and those it stored for another request's count.
  const written = new Set<string>()
  let created = new Set<string>()
  try {
    // A retry racing its original may have read a call as new and counted it only after the original stored it and
    // released its tokens: re-read what this request counted and take back what a counting writer already stored.
    const held = new Set(count.counted.map(idOf))
    const done = held.size > 0 ? await countedStarts(project, [...held]) : new Set<string>()
    await count.undo([...done].map(plus))
    const mine = write.fresh.filter((s) => held.has(s.id) && !done.has(s.id))
    // Starts whose token another request holds: that request counts them. Written only if still absent (it may be
    // writing them now, or have crashed after counting), and without the `counted` mark, which only a counter sets.
    const others = write.fresh.filter((s) => !held.has(s.id))
    if (others.length > 0)
      created = await putStartsIfAbsent(await mapInParallel(others, ITEM_REQUESTS_IN_FLIGHT, build))
    const raced = [...done, ...others.map((s) => s.id)]
    const parts = { starts: await mapInParallel(mine, ITEM_REQUESTS_IN_FLIGHT, build), ends: await write.ends(raced) }
    for (const s of mine) written.add(s.id)
    await putCallParts(parts, { countedStarts: true })
  } catch (error) {
    // Nothing may stay counted that is not stored; the failure itself is what the client hears about.
    await rollBackStarts(project, count, written).catch(() => undefined)
    throw error
  }
  await count.release()
  await recheckDeferred(project, created)
}

/** Whether a stored start is deleted but its deletion is not in the count yet (a delete must still uncount it). */
export function awaitsUncount(start: CallStartItem): boolean {
  return start.deleted_at !== undefined && start.uncount_pending !== undefined
}

/**
 * Soft-deletes the `live` calls and takes each deletion out of the count exactly once, together with `unsettled`
 * (deleted calls that `awaitsUncount`); returns how many calls this request deleted, counting a mark of its own whose
 * answer was lost and was retried.
 */
export async function deleteCountingCalls(
  project: string,
  live: readonly string[],
  unsettled: readonly string[],
  deletedAt: string,
): Promise<number> {
  const requestId = randomUUID()
  const results = await mapInParallel(live, ITEM_REQUESTS_IN_FLIGHT, (id) =>
    markCallDeleted(project, id, deletedAt, requestId),
  )
  const marked = live.filter((_, i) => results[i])
  // Deleted meanwhile by another request, or by this one's own write whose answer was lost and retried.
  const conflicts = live.filter((_, i) => !results[i])
  const pending = [...marked, ...conflicts, ...unsettled]
  return marked.length + (await uncountDeleted(project, pending, conflicts, requestId))
}

/**
 * Counts starts that are stored but were not counted (written by a request that left the counting to another, which
 * then took its count back): counts them under their tokens, re-reads them and marks `counted` those still unmarked;
 * takes back the rest. A start whose token another request holds is left to it.
 */
async function healStarts(project: string, ids: readonly string[]): Promise<void> {
  const count = await countCalls(project, ids.map(plus), 1)
  if (count.counted.length === 0) return
  const locked = count.counted.map(idOf)
  const states = await startCountStates(project, locked)
  const heal = locked.filter((id) => states.get(id)?.counted === false)
  const results = await settleInParallel(heal, ITEM_REQUESTS_IN_FLIGHT, (id) => markStartCounted(project, id))
  // A start whose mark failed keeps its token and its count: it is stored, so the count is right, and the pending
  // token keeps any later writer from counting it again.
  const kept = new Set(heal.map(plus))
  await count.finish(
    count.counted.filter((t) => !kept.has(t)),
    new Set(failedOf(heal, results).map(plus)),
  )
  const failure = firstRejection(results)
  if (failure !== undefined) throw failure
}

/**
 * After an ingest failed having counted its new starts: keeps the count of those among `written` (the starts it tried to
 * store) that are stored with `counted`, takes back the others and releases every token it holds, then counts any of
 * those a concurrent retry stored meanwhile without counting (it deferred to this request's tokens).
 */
export async function rollBackStarts(project: string, count: CallCount, written: ReadonlySet<string>): Promise<void> {
  if (count.counted.length === 0) return
  const states = await startCountStates(project, [...written])
  const dropped = count.counted.filter((t) => states.get(idOf(t))?.counted !== true)
  await count.finish(dropped)
  if (dropped.length === 0) return
  const stored = await startCountStates(project, dropped.map(idOf))
  const unmarked = [...stored].flatMap(([id, s]) => (s.counted ? [] : [id]))
  if (unmarked.length > 0) await healStarts(project, unmarked)
}

/**
 * For starts this request stored without counting because another request held their tokens: those whose token is no
 * longer pending and that are still unmarked were given up by that request after its own write failed, so they are
 * counted here.
 */
export async function recheckDeferred(project: string, created: ReadonlySet<string>): Promise<void> {
  if (created.size === 0) return
  const pending = await pendingTokens(project, [...created].map(plus))
  const released = [...created].filter((id) => !pending.has(plus(id)))
  if (released.length === 0) return
  const states = await startCountStates(project, released)
  const unmarked = released.filter((id) => states.get(id)?.counted === false)
  if (unmarked.length > 0) await healStarts(project, unmarked)
}

/**
 * Takes deleted calls out of the count exactly once: `ids` are deleted starts that may carry `uncount_pending`. Each
 * is counted under its `-<id>` token (on the shard its id picks, so every delete of it meets there), re-read, and if
 * still pending uncounted and cleared; one another request already cleared is taken back. `own` are ids whose delete
 * mark answered "already deleted": returns how many of them carry `requestId`, i.e. were marked by this request (the
 * client's retry of a mark whose answer was lost).
 */
async function uncountDeleted(
  project: string,
  ids: readonly string[],
  own: readonly string[],
  requestId: string,
): Promise<number> {
  const count = await countCalls(
    project,
    ids.map((id) => `-${id}`),
    -1,
  )
  const locked = count.counted.map(idOf)
  let states: Awaited<ReturnType<typeof startCountStates>>
  try {
    states = await startCountStates(project, [...locked, ...own])
  } catch (error) {
    // Nothing cleared yet: give every count back, so the marks stay pending for a retry to settle.
    await count.finish(count.counted).catch(() => undefined)
    throw error
  }
  const settle = locked.filter((id) => states.get(id)?.uncountPending !== undefined)
  const results = await settleInParallel(settle, ITEM_REQUESTS_IN_FLIGHT, (id) => clearUncountPending(project, id))
  // A call whose clear failed keeps its token and its count: the deletion is counted, the token stops a recount.
  const kept = new Set(settle.map((id) => `-${id}`))
  await count.finish(
    count.counted.filter((t) => !kept.has(t)),
    new Set(failedOf(settle, results).map((id) => `-${id}`)),
  )
  const failure = firstRejection(results)
  if (failure !== undefined) throw failure
  return own.filter((id) => states.get(id)?.uncountPending === requestId).length
}
