import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb'
import { getBatch, inParallel, writeBatch } from '#shared/db/batch-write'
import { type IndexWalkOptions, walkIndex, walkMerged } from '#shared/db/call-index-walk'
import { allShards, CALL_INDEX, callIndexPk, callPk, LEAN_PROJECTION, opBase } from '#shared/db/call-keys'
import { endRecord, startRecord } from '#shared/db/call-records'
import { db, table } from '#shared/db/client'
import { putIfAbsent, updateIfExists } from '#shared/db/conditional-write'
import { loadJson, type StoredJson, storeJson } from '#shared/db/large-value'
import { TTL_ATTRIBUTE } from '#shared/db/table'
import { assertUpdateFits } from '#shared/db/update-fits'
import { isItemTooLarge } from '#shared/errors/error-response'
import { ItemTooLargeError } from '#shared/errors/storage-limit-errors'
import {
  type CallEndItem,
  CallEndItemSchema,
  type CallParts,
  type CallStartItem,
  CallStartItemSchema,
} from '#shared/schemas/call-item'

/**
 * The calls boundary: domain code (`shared/tracing/`) reads and writes calls here as call parts (`CallParts`, a start
 * and an end item), never as raw items, index names, key shapes or shards, which stay in `call-keys.ts` and
 * `call-index-walk.ts`. Offered: writes of parts (`putCallParts`, `putStartsIfAbsent`), reads by id
 * (`getCallParts`, `storedTraceIds`), listings walked page by page (`walkCalls`: a trace, parents, threads, ops, the
 * roots or the project timeline), trace sizes (`traceStorageSize`), the existence probe (`countStartedCalls`) and the
 * display name. The count marks on start parts belong to the counting protocol (`shared/db/call-counter.ts`,
 * `shared/tracing/call-count.ts`). See docs/data-model.md, "Tracing: calls".
 */

/**
 * A call's JSON column, stored inline or as large-value chunks in the call's partition. `exception` is a string
 * column, chunked (as its JSON text) only when too long to keep inline.
 */
export type CallJsonColumn = 'attributes' | 'inputs' | 'otel_dump' | 'output' | 'summary' | 'exception'

const COLUMN_PREFIX: Record<CallJsonColumn, string> = {
  attributes: 'S#attributes',
  inputs: 'S#inputs',
  otel_dump: 'S#otel',
  output: 'E#output',
  summary: 'E#summary',
  exception: 'E#exception',
}

// The sort key of a display name set by `call/update` before the call's start was stored.
const PENDING_NAME_SK = 'U'

/** Keeps a call's JSON column inline when small, else stores its chunks; returns what its part holds. */
export function storeCallJson(project: string, id: string, column: CallJsonColumn, json: string): Promise<StoredJson> {
  return storeJson({ pk: callPk(project, id), skPrefix: COLUMN_PREFIX[column] }, json)
}

/** The JSON text of a call's stored column, its chunks read when it is a ref. */
export function loadCallJson(project: string, id: string, column: CallJsonColumn, stored: StoredJson): Promise<string> {
  return loadJson({ pk: callPk(project, id), skPrefix: COLUMN_PREFIX[column] }, stored)
}

// At most this many batch requests in flight per call, so one huge upsert batch does not burst the table.
const MAX_IN_FLIGHT = 16

// A failure is thrown once the requests already sent have settled (see inParallel): the ingest rollback reads what
// is stored right after.
const inPool = <T>(items: readonly T[], run: (item: T) => Promise<void>) => inParallel(items, MAX_IN_FLIGHT, run)

/** Writes raw items (from `startRecord`/`endRecord`) with `BatchWriteItem`, 25 per request, several at once. */
export async function putCallItems(items: Record<string, unknown>[]): Promise<void> {
  const chunks: Record<string, unknown>[][] = []
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25))
  await inPool(chunks, async (chunk) => {
    await writeBatch(chunk.map((Item) => ({ PutRequest: { Item } })))
  })
}

/**
 * Stores call parts with plain puts (later parts for the same call win), retrying unprocessed items; starts are
 * marked `counted` with `countedStarts` (only the counting protocol, `shared/tracing/call-count.ts`, sets it).
 */
export async function putCallParts(
  parts: { starts: readonly CallStartItem[]; ends: readonly CallEndItem[] },
  options: { countedStarts?: boolean } = {},
): Promise<void> {
  const counted = options.countedStarts === true ? { counted: true } : {}
  await putCallItems([
    ...parts.starts.map((s) => ({ ...startRecord(s), ...counted })),
    ...parts.ends.map((e) => endRecord(e)),
  ])
}

/**
 * Stores start parts only where the call has no stored start yet, one conditional PutItem each (several at once):
 * for the rare writer that may not overwrite a start another request is writing. Stored without the `counted` mark.
 * Returns the ids whose start this call created.
 */
export async function putStartsIfAbsent(starts: readonly CallStartItem[]): Promise<Set<string>> {
  const created = new Set<string>()
  await inPool(starts, async (start) => {
    if ((await putIfAbsent(startRecord(start))) === 'written') created.add(start.id)
  })
  return created
}

/** The stored `trace_id` of each call among `ids` that has a start part, read strongly. */
export async function storedTraceIds(project: string, ids: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  const keys = [...new Set(ids)].map((id) => ({ PK: callPk(project, id), SK: 'S' }))
  const chunks: (typeof keys)[] = []
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100))
  await inPool(chunks, async (chunk) => {
    const items = await getBatch(chunk, { ConsistentRead: true, ProjectionExpression: 'id, trace_id' })
    for (const item of items) found.set(String(item.id), String(item.trace_id))
  })
  return found
}

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

// Parses a raw call item (either part) into the parts map (lean items lack the large columns, which read as empty).
function addPart(parts: Map<string, CallParts>, item: Record<string, unknown>): void {
  const id = item.id as string
  let entry = parts.get(id)
  if (entry === undefined) {
    entry = {}
    parts.set(id, entry)
  }
  if (item.SK === 'S') entry.start = CallStartItemSchema.parse(item)
  else if (item.SK === 'E') entry.end = CallEndItemSchema.parse(item)
  else if (item.SK === PENDING_NAME_SK) entry.pendingDisplayName = String(item.display_name ?? '')
}

/** Which parts of a call a read fetches. */
export type CallPartsWanted = 'both' | 'start' | 'end'

/**
 * Options of a read by id: the parts wanted (default both), `lean` to skip the large JSON columns, `pendingNames` to
 * read the display name a `call/update` left for a call not started yet too (ingest, for the starts it stores).
 */
export type CallPartsOptions = { parts?: CallPartsWanted; lean?: boolean; pendingNames?: boolean }

const SORT_KEYS: Record<CallPartsWanted, readonly string[]> = { both: ['S', 'E'], start: ['S'], end: ['E'] }

async function readParts(
  project: string,
  ids: readonly string[],
  options: CallPartsOptions,
  into: Map<string, CallParts>,
): Promise<Map<string, CallParts>> {
  const parts = SORT_KEYS[options.parts ?? 'both']
  const which = options.pendingNames === true ? [...parts, PENDING_NAME_SK] : parts
  const keys = [...new Set(ids)].flatMap((id) => which.map((SK) => ({ PK: callPk(project, id), SK })))
  const chunks: (typeof keys)[] = []
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100))
  await inPool(chunks, async (chunk) => {
    const read = options.lean
      ? { ProjectionExpression: LEAN_PROJECTION.ProjectionExpression, ExpressionAttributeNames: LEAN_PROJECTION.names }
      : {}
    for (const item of await getBatch(chunk, read)) addPart(into, item)
  })
  return into
}

/** Reads calls by id (`BatchGetItem`, 100 keys per request): the stored parts of each call found. */
export async function getCallParts(
  project: string,
  ids: readonly string[],
  options: CallPartsOptions = {},
): Promise<Map<string, CallParts>> {
  return readParts(project, ids, options, new Map())
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

// How long such a name waits for its start: the SDKs retry a batch for hours, so a day (then TTL removes it).
const PENDING_NAME_TTL_S = 24 * 3600

/**
 * Keeps a display name for a call whose start is not stored yet (`call/update` may come before the start: Weave
 * stores an update as a part of its own and merges it when read): the ingest that stores the start applies it.
 */
export async function putPendingDisplayName(project: string, id: string, displayName: string): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: table(),
      Item: {
        PK: callPk(project, id),
        SK: PENDING_NAME_SK,
        project_id: project,
        id,
        display_name: displayName,
        [TTL_ATTRIBUTE]: Math.floor(Date.now() / 1000) + PENDING_NAME_TTL_S,
      },
    }),
  )
}

/** The display names `call/update` left for calls among `ids` (strongly read: '' clears), by call id. */
export async function pendingDisplayNames(project: string, ids: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  const keys = [...new Set(ids)].map((id) => ({ PK: callPk(project, id), SK: PENDING_NAME_SK }))
  const chunks: (typeof keys)[] = []
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100))
  await inPool(chunks, async (chunk) => {
    const items = await getBatch(chunk, { ConsistentRead: true, ProjectionExpression: 'id, display_name' })
    for (const item of items) found.set(String(item.id), String(item.display_name ?? ''))
  })
  return found
}

/**
 * Sets or clears a call's display name: `missing` when the call has no start part, `too-large` when the part would
 * pass DynamoDB's item size limit with it.
 */
export async function setCallDisplayName(
  project: string,
  id: string,
  displayName: string | undefined,
): Promise<'updated' | 'missing' | 'too-large'> {
  const key = { PK: callPk(project, id), SK: 'S' }
  try {
    await assertUpdateFits(key, { display_name: displayName })
    const out = await updateIfExists({
      Key: key,
      UpdateExpression: displayName === undefined ? 'REMOVE display_name' : 'SET display_name = :n',
      ...(displayName === undefined ? {} : { ExpressionAttributeValues: { ':n': displayName } }),
    })
    return out === undefined ? 'missing' : 'updated'
  } catch (error) {
    if (error instanceof ItemTooLargeError || isItemTooLarge(error)) return 'too-large'
    throw error
  }
}
