import { QueryCommand } from '@aws-sdk/lib-dynamodb'
import { getBatch } from '#shared/db/batch-write'
import { type IndexWalkOptions, walkIndex, walkMerged } from '#shared/db/call-index-walk'
import { allShards, CALL_INDEX, callIndexPk, callPk, opBase } from '#shared/db/call-keys'
import { addPart, inPool, readParts } from '#shared/db/call-repository'
import { db, table } from '#shared/db/client'
import type { CallParts } from '#shared/schemas/call-item'

// The calls boundary's listings (with shared/db/call-repository.ts, its writes and reads by id): a project's calls
// walked page by page through the call indexes (a trace, parents, threads, ops, the roots or the timeline), the
// existence probe and trace sizes, yielded as call parts; index names, keys and shards stay in call-keys.ts.

// The `size` and stored `trace_id` of each call among `ids` that has an end part (projected: no JSON columns).
async function endPartSizes(
  project: string,
  ids: readonly string[],
): Promise<Map<string, { size: number; traceId: string | undefined }>> {
  const found = new Map<string, { size: number; traceId: string | undefined }>()
  const keys = [...new Set(ids)].map((id) => ({ PK: callPk(project, id), SK: 'E' }))
  const chunks: (typeof keys)[] = []
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100))
  await inPool(chunks, async (chunk) => {
    const options = { ProjectionExpression: 'id, #s, trace_id', ExpressionAttributeNames: { '#s': 'size' } }
    for (const item of await getBatch(chunk, options)) {
      const traceId = typeof item.trace_id === 'string' ? item.trace_id : undefined
      found.set(String(item.id), { size: Number(item.size ?? 0), traceId })
    }
  })
  return found
}

/**
 * A stored listing of a project's calls. `traces` are walked one after the other, each in call-id order; the others
 * in `started_at, id` order, their partitions merged: `parents` (children of these calls), `threads`, `ops` (exact op
 * names or `name:*`; every version of an op name is in one listing, so the caller checks the exact version), `roots`
 * (calls without a parent) and `timeline` (every call of the project).
 */
export type CallListing =
  | { kind: 'traces'; traceIds: readonly string[] }
  | { kind: 'parents'; parentIds: readonly string[] }
  | { kind: 'threads'; threadIds: readonly string[] }
  | { kind: 'ops'; opNames: readonly string[] }
  | { kind: 'roots' }
  | { kind: 'timeline' }

/**
 * Options of `walkCalls`: `startedFrom`/`startedTo` bound a time-ordered listing on `started_at` (stored form,
 * inclusive), `descending` walks it newest first; `fromId` starts a trace at that call id (see `traceOrderHolds`);
 * `expect` is about how many calls the caller needs (pages are sized so a limited walk reads little; undefined reads
 * in 1 MB pages); `lean` leaves out the large JSON columns; `startsOnly` yields start parts only.
 */
export type CallWalkOptions = {
  startedFrom?: string
  startedTo?: string
  descending?: boolean
  fromId?: string
  expect?: number
  lean?: boolean
  startsOnly?: boolean
}

function partitionsOf(project: string, listing: CallListing): { index: string; pks: string[] } {
  switch (listing.kind) {
    case 'traces':
      return { index: CALL_INDEX.trace, pks: listing.traceIds.map((t) => callIndexPk.trace(project, t)) }
    case 'parents':
      return { index: CALL_INDEX.parent, pks: listing.parentIds.map((p) => callIndexPk.parent(project, p)) }
    case 'threads':
      return { index: CALL_INDEX.thread, pks: listing.threadIds.map((t) => callIndexPk.thread(project, t)) }
    case 'ops': {
      const bases = [...new Set(listing.opNames.map((o) => (o.endsWith(':*') ? o.slice(0, -2) : opBase(o))))]
      return { index: CALL_INDEX.op, pks: bases.flatMap((b) => allShards((s) => callIndexPk.op(project, b, s))) }
    }
    case 'roots':
      return { index: CALL_INDEX.parent, pks: allShards((s) => callIndexPk.root(project, s)) }
    case 'timeline':
      return { index: CALL_INDEX.timeline, pks: allShards((s) => callIndexPk.timeline(project, s)) }
  }
}

/**
 * How many index partitions walking `listing` reads at once (one Query each, merged in order): one per trace, parent
 * or thread id, one per shard for each op name base, the shards for the roots and the timeline.
 */
export function listingPartitions(listing: CallListing): number {
  return partitionsOf('', listing).pks.length
}

// Call ids made of these characters sort the same as strings and inside the trace index's `<id>#S` / `<id>#E` keys:
// nothing below `$` meets the `#` separator, nothing from U+D800 up differs between UTF-16 and DynamoDB's UTF-8 order.
const PLAIN_ID = /^[$-\ud7ff]*$/

/**
 * Whether a trace walk orders this call id among the others as a string comparison does (and `fromId` may start at
 * it): true for ids without a character below `$` or from U+D800 up.
 */
export function traceOrderHolds(id: string): boolean {
  return PLAIN_ID.test(id)
}

// The parts of one index page: ends are read by key for starts whose end is not in the page (index pages of starts
// carry no ends; a trace page lacks ends stored without a trace id and an end whose start is on the next page). Only
// calls with a start are kept: a call is listed once it started.
async function pageParts(
  project: string,
  items: readonly Record<string, unknown>[],
  options: CallWalkOptions,
): Promise<CallParts[]> {
  const parts = new Map<string, CallParts>()
  for (const item of items) if (options.startsOnly !== true || item.SK === 'S') addPart(parts, item)
  if (options.startsOnly !== true) {
    const missing = [...parts].filter(([, p]) => p.start !== undefined && p.end === undefined).map(([id]) => id)
    if (missing.length > 0) await readParts(project, missing, { parts: 'end', lean: options.lean === true }, parts)
  }
  return [...parts.values()].filter((p) => p.start !== undefined)
}

/**
 * Walks a listing of the project's calls page by page in its order (see `CallListing`), yielding the parts of each
 * call, deleted calls included. A limited walk stops reading when the caller stops iterating.
 */
export async function* walkCalls(
  project: string,
  listing: CallListing,
  options: CallWalkOptions = {},
): AsyncGenerator<CallParts[]> {
  const { index, pks } = partitionsOf(project, listing)
  const trace = listing.kind === 'traces'
  // A trace's calls are two index items each; merged partitions share the page.
  const perPage = options.expect === undefined ? undefined : trace ? 2 * options.expect + 2 : options.expect + 1
  const pageSize =
    perPage === undefined ? undefined : Math.min(1000, Math.max(25, Math.ceil(perPage / pks.length) + 10))
  const walk: IndexWalkOptions = {
    ...(options.lean === undefined ? {} : { lean: options.lean }),
    ...(pageSize === undefined ? {} : { pageSize }),
  }
  if (trace) {
    if (options.fromId !== undefined) walk.from = options.fromId
    for (const pk of pks)
      for await (const page of walkIndex(index, pk, walk)) yield await pageParts(project, page, options)
    return
  }
  // Sort keys are `<started_at>#<id>`: a bare instant sorts before every key of that instant.
  if (options.startedFrom !== undefined) walk.from = options.startedFrom
  if (options.startedTo !== undefined) walk.to = `${options.startedTo}#\uffff`
  if (options.descending !== undefined) walk.descending = options.descending
  for await (const page of walkMerged(index, pks, walk)) yield await pageParts(project, page, options)
}

/**
 * How many calls were ever started in the project, deleted ones included (index keys only, as ClickHouse reads the
 * raw table), counted up to `atMost`.
 */
export async function countStartedCalls(project: string, atMost: number): Promise<number> {
  const { index, pks } = partitionsOf(project, { kind: 'timeline' })
  const counts = await Promise.all(
    pks.map(async (pk) => {
      let n = 0
      for await (const page of walkIndex(index, pk, { pageSize: atMost, keysOnly: true })) {
        n += page.length
        if (n >= atMost) break
      }
      return n
    }),
  )
  return Math.min(
    atMost,
    counts.reduce((a, b) => a + b, 0),
  )
}

/**
 * Byte size of every stored part of a trace (docs/tracing.md §7.6 `total_storage_size_bytes`): the parts in the trace
 * index, plus the end parts of its calls that are not there, read by key: an end stored before its start
 * (docs/tracing.md §7.1) had no trace id to be indexed under. A call still running has no end, so its key read finds
 * nothing; a complete trace needs none.
 */
export async function traceStorageSize(project: string, traceId: string): Promise<number> {
  let total = 0
  const started = new Set<string>()
  const ended = new Set<string>()
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: CALL_INDEX.trace,
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': callIndexPk.trace(project, traceId) },
        ProjectionExpression: '#i, #k, #s',
        ExpressionAttributeNames: { '#i': 'id', '#k': 'SK', '#s': 'size' },
        ExclusiveStartKey: startKey,
      }),
    )
    for (const item of page.Items ?? []) {
      total += Number(item.size ?? 0)
      if (item.SK === 'S') started.add(String(item.id))
      else if (item.SK === 'E') ended.add(String(item.id))
    }
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  const unindexed = [...started].filter((id) => !ended.has(id))
  if (unindexed.length === 0) return total
  for (const end of (await endPartSizes(project, unindexed)).values()) {
    // An end naming another trace is indexed (and counted) there.
    if (end.traceId === undefined || end.traceId === traceId) total += end.size
  }
  return total
}
