import {
  type CallCount,
  clearUncountPending,
  countCalls,
  countEachCall,
  markStartCounted,
  pendingTokens,
  startCountStates,
} from '#shared/db/call-counter'

/**
 * Keeps the project's call counter (call-counter.ts) in step with the stored call items when a write fails part-way or
 * races a retry. The rules: a pending token's delta is in the count, and only its holder releases it; a start stored
 * with `counted` is counted; a start a writer stored without it, deferring to another request's token, is counted by
 * that request, or here (`healStarts`) once that request gave its count back; a deleted start carrying
 * `uncount_pending` is still in the count. See docs/data-model.md, "The call counter".
 */

const plus = (id: string) => `+${id}`
const idOf = (token: string) => token.slice(1)

function failedOf<T>(ids: readonly string[], results: PromiseSettledResult<T>[]): string[] {
  return ids.filter((_, i) => results[i]?.status === 'rejected')
}

function firstRejection<T>(results: PromiseSettledResult<T>[]): unknown {
  return results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason
}

/**
 * Counts starts that are stored but were not counted (written by a request that left the counting to another, which
 * then took its count back): counts them under their tokens, re-reads them and marks `counted` those still unmarked;
 * takes back the rest. A start whose token another request holds is left to it.
 */
async function healStarts(project: string, ids: readonly string[], seed: string): Promise<void> {
  const count = await countCalls(project, ids.map(plus), 1, seed)
  if (count.counted.length === 0) return
  const locked = count.counted.map(idOf)
  const states = await startCountStates(project, locked)
  const heal = locked.filter((id) => states.get(id)?.counted === false)
  const results = await Promise.allSettled(heal.map((id) => markStartCounted(project, id)))
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
export async function rollBackStarts(
  project: string,
  count: CallCount,
  written: ReadonlySet<string>,
  seed: string,
): Promise<void> {
  if (count.counted.length === 0) return
  const states = await startCountStates(project, [...written])
  const dropped = count.counted.filter((t) => states.get(idOf(t))?.counted !== true)
  await count.finish(dropped)
  if (dropped.length === 0) return
  const stored = await startCountStates(project, dropped.map(idOf))
  const unmarked = [...stored].flatMap(([id, s]) => (s.counted ? [] : [id]))
  if (unmarked.length > 0) await healStarts(project, unmarked, seed)
}

/**
 * For starts this request stored without counting because another request held their tokens: those whose token is no
 * longer pending and that are still unmarked were given up by that request after its own write failed, so they are
 * counted here.
 */
export async function recheckDeferred(project: string, created: ReadonlySet<string>, seed: string): Promise<void> {
  if (created.size === 0) return
  const pending = await pendingTokens(project, [...created].map(plus), seed)
  const released = [...created].filter((id) => !pending.has(plus(id)))
  if (released.length === 0) return
  const states = await startCountStates(project, released)
  const unmarked = released.filter((id) => states.get(id)?.counted === false)
  if (unmarked.length > 0) await healStarts(project, unmarked, seed)
}

/**
 * Takes deleted calls out of the count exactly once: `ids` are deleted starts that may carry `uncount_pending`. Each
 * is counted under its `-<id>` token (on the shard its id picks, so every delete of it meets there), re-read, and if
 * still pending uncounted and cleared; one another request already cleared is taken back. `own` are ids whose delete
 * mark answered "already deleted": returns how many of them carry `requestId`, i.e. were marked by this request (the
 * client's retry of a mark whose answer was lost).
 */
export async function uncountDeleted(
  project: string,
  ids: readonly string[],
  own: readonly string[],
  requestId: string,
): Promise<number> {
  const count = await countEachCall(
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
  const results = await Promise.allSettled(settle.map((id) => clearUncountPending(project, id)))
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
