import { UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { getBatch, inParallel, writeBatch } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { ifConditionHolds, putIfAbsent, updateIfExists } from '#shared/db/conditional-write'
import { CALL_SUMMARY_ATTRIBUTES } from '#shared/db/table'
import {
  type CallEndItem,
  CallEndItemSchema,
  type CallParts,
  type CallStartItem,
  CallStartItemSchema,
} from '#shared/schemas/call-item'

/**
 * Calls: each call is two items in its own partition, `PK = CALL#<project>#<id>`, `SK = S` (start part) and `SK = E`
 * (end part), written with plain idempotent puts so `upsert_batch` is two item writes per call through
 * `BatchWriteItem`. The start part carries the index keys (see docs/data-model.md, "Tracing: calls"):
 * GSI1 trace (both parts), GSI2 project timeline, GSI3 op, GSI4 parent (roots under their own key), GSI5 thread.
 */

/** Index names and key prefixes of the call access patterns. */
export const CALL_INDEX = {
  trace: 'GSI1',
  timeline: 'GSI2',
  op: 'GSI3',
  parent: 'GSI4',
  thread: 'GSI5',
} as const

/** The partition key of a call's items. */
export const callPk = (project: string, id: string) => `CALL#${project}#${id}`

/**
 * Index partitions that every call of a project (or of a busy op) lands in are split into this many shards by call
 * id, so one project's ingest is not capped by a single index partition's write limit; reads merge the shards.
 */
export const INDEX_SHARDS = 8

/** The index shard of a call (FNV-1a of its id). */
export function callShard(id: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % INDEX_SHARDS
}

/** The index partition keys of the call access patterns. */
export const callIndexPk = {
  trace: (project: string, traceId: string) => `CALLTRACE#${project}#${traceId}`,
  timeline: (project: string, shard: number) => `CALLS#${project}#${shard}`,
  op: (project: string, opBase: string, shard: number) => `CALLOP#${project}#${shard}#${opBase}`,
  root: (project: string, shard: number) => `CALLROOT#${project}#${shard}`,
  parent: (project: string, parentId: string) => `CALLPARENT#${project}#${parentId}`,
  thread: (project: string, threadId: string) => `CALLTHREAD#${project}#${threadId}`,
}

/** Every shard's key of a sharded index partition. */
export function allShards(key: (shard: number) => string): string[] {
  return Array.from({ length: INDEX_SHARDS }, (_, shard) => key(shard))
}

/** An op name without its version (`weave:///e/p/op/name:digest` → `weave:///e/p/op/name`), the op index key. */
export function opBase(opName: string): string {
  const colon = opName.lastIndexOf(':')
  return colon <= 'weave:'.length - 1 ? opName : opName.slice(0, colon)
}

/** The full stored item of a start part, with its index keys. */
export function startRecord(item: CallStartItem): Record<string, unknown> {
  const p = item.project_id
  const sk = `${item.started_at}#${item.id}`
  const shard = callShard(item.id)
  return {
    PK: callPk(p, item.id),
    SK: 'S',
    GSI1PK: callIndexPk.trace(p, item.trace_id),
    GSI1SK: `${item.id}#S`,
    GSI2PK: callIndexPk.timeline(p, shard),
    GSI2SK: sk,
    GSI3PK: callIndexPk.op(p, opBase(item.op_name), shard),
    GSI3SK: sk,
    GSI4PK: item.parent_id === undefined ? callIndexPk.root(p, shard) : callIndexPk.parent(p, item.parent_id),
    GSI4SK: sk,
    ...(item.thread_id === undefined ? {} : { GSI5PK: callIndexPk.thread(p, item.thread_id), GSI5SK: sk }),
    ...item,
  }
}

/** The full stored item of an end part; it joins the trace index when its trace id is known. */
export function endRecord(item: CallEndItem): Record<string, unknown> {
  return {
    PK: callPk(item.project_id, item.id),
    SK: 'E',
    ...(item.trace_id === undefined
      ? {}
      : { GSI1PK: callIndexPk.trace(item.project_id, item.trace_id), GSI1SK: `${item.id}#E` }),
    ...item,
  }
}

// At most this many batch requests in flight per call, so one huge upsert batch does not burst the table.
const MAX_IN_FLIGHT = 16

// A failure is thrown once the requests already sent have settled (see inParallel): the ingest rollback reads what
// is stored right after.
const inPool = <T>(items: readonly T[], run: (item: T) => Promise<void>) => inParallel(items, MAX_IN_FLIGHT, run)

/** Writes items with `BatchWriteItem` (25 per request, several requests at once), retrying unprocessed items. */
export async function putCallItems(items: Record<string, unknown>[]): Promise<void> {
  const chunks: Record<string, unknown>[][] = []
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25))
  await inPool(chunks, async (chunk) => {
    await writeBatch(chunk.map((Item) => ({ PutRequest: { Item } })))
  })
}

/**
 * Stores start items (from `startRecord`) only where the call has no stored start yet, one conditional PutItem each
 * (several at once): for the rare writer that may not overwrite a start another request is writing. Returns the ids
 * whose start this call created.
 */
export async function putStartsIfAbsent(items: Record<string, unknown>[]): Promise<Set<string>> {
  const created = new Set<string>()
  await inPool(items, async (Item) => {
    if ((await putIfAbsent(Item)) === 'written') created.add(Item.id as string)
  })
  return created
}

/** What the call counter needs to know of a stored start part. */
export type StartCountState = { counted: boolean; uncountPending: string | undefined }

/** The count state of each call among `ids` that has a stored start part, read strongly (projected). */
export async function startCountStates(project: string, ids: readonly string[]): Promise<Map<string, StartCountState>> {
  const found = new Map<string, StartCountState>()
  const keys = [...new Set(ids)].map((id) => ({ PK: callPk(project, id), SK: 'S' }))
  const chunks: (typeof keys)[] = []
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100))
  await inPool(chunks, async (chunk) => {
    const options = { ConsistentRead: true, ProjectionExpression: 'id, counted, uncount_pending' }
    for (const item of await getBatch(chunk, options)) {
      const pending = typeof item.uncount_pending === 'string' ? item.uncount_pending : undefined
      found.set(item.id as string, { counted: item.counted === true, uncountPending: pending })
    }
  })
  return found
}

/** The ids among `ids` whose stored start was written by a request that counted it (`counted`), read strongly. */
export async function countedStarts(project: string, ids: readonly string[]): Promise<Set<string>> {
  const states = await startCountStates(project, ids)
  return new Set([...states].flatMap(([id, s]) => (s.counted ? [id] : [])))
}

/** Marks a stored start as counted (for a start stored by a writer that did not count it). */
export async function markStartCounted(project: string, id: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: { PK: callPk(project, id), SK: 'S' },
      UpdateExpression: 'SET counted = :t',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':t': true },
    }),
  )
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

/** The `size` and stored `trace_id` of each call among `ids` that has an end part (projected: no JSON columns). */
export async function endPartSizes(
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
 * Attributes a lean read fetches: everything but the large JSON columns `attributes`, `inputs`, `otel_dump` and
 * `output` (usage roll-ups and counts never look at them), so DynamoDB returns and the client parses far less.
 */
export const LEAN_ATTRIBUTES = ['PK', 'SK', ...CALL_SUMMARY_ATTRIBUTES] as const

/** `LEAN_ATTRIBUTES` as a projection expression with its attribute names. */
export const LEAN_PROJECTION = {
  ProjectionExpression: LEAN_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
  names: Object.fromEntries(LEAN_ATTRIBUTES.map((a, i) => [`#a${i}`, a])),
}

/** Parses a raw call item (either part) into the parts map (lean items lack the large columns, which read as empty). */
export function addPart(parts: Map<string, CallParts>, item: Record<string, unknown>): void {
  const id = item.id as string
  let entry = parts.get(id)
  if (entry === undefined) {
    entry = {}
    parts.set(id, entry)
  }
  if (item.SK === 'S') entry.start = CallStartItemSchema.parse(item)
  else if (item.SK === 'E') entry.end = CallEndItemSchema.parse(item)
}

/** Reads the given parts (`S`/`E`) of calls by id with `BatchGetItem`, 100 keys per request. */
export async function getCallParts(
  project: string,
  ids: readonly string[],
  which: readonly ('S' | 'E')[] = ['S', 'E'],
  into = new Map<string, CallParts>(),
  lean = false,
): Promise<Map<string, CallParts>> {
  const keys = [...new Set(ids)].flatMap((id) => which.map((SK) => ({ PK: callPk(project, id), SK })))
  const chunks: (typeof keys)[] = []
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100))
  await inPool(chunks, async (chunk) => {
    const options = lean
      ? { ProjectionExpression: LEAN_PROJECTION.ProjectionExpression, ExpressionAttributeNames: LEAN_PROJECTION.names }
      : {}
    for (const item of await getBatch(chunk, options)) addPart(into, item)
  })
  return into
}

// DynamoDB's refusal of an update that would take the item past 400 KB (dynalite words it the same way).
const ITEM_TOO_LARGE = /item size (to update )?has exceeded the maximum allowed size/i

/**
 * Sets or clears a call's display name: `missing` when the call has no start part, `too-large` when the part would
 * pass DynamoDB's item size limit with it.
 */
export async function setCallDisplayName(
  project: string,
  id: string,
  displayName: string | undefined,
): Promise<'updated' | 'missing' | 'too-large'> {
  try {
    const out = await updateIfExists({
      Key: { PK: callPk(project, id), SK: 'S' },
      UpdateExpression: displayName === undefined ? 'REMOVE display_name' : 'SET display_name = :n',
      ...(displayName === undefined ? {} : { ExpressionAttributeValues: { ':n': displayName } }),
    })
    return out === undefined ? 'missing' : 'updated'
  } catch (error) {
    if (error instanceof Error && error.name === 'ValidationException' && ITEM_TOO_LARGE.test(error.message)) {
      return 'too-large'
    }
    throw error
  }
}

/**
 * Soft-deletes a call's start part unless it is deleted already, recording `uncount_pending` (the deleting request's
 * id) until the call counter shows the deletion; returns whether this write deleted it.
 */
export async function markCallDeleted(
  project: string,
  id: string,
  deletedAt: string,
  requestId: string,
): Promise<boolean> {
  const deleted = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: callPk(project, id), SK: 'S' },
        UpdateExpression: 'SET deleted_at = :d, uncount_pending = :r',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(deleted_at)',
        ExpressionAttributeValues: { ':d': deletedAt, ':r': requestId },
      }),
    ),
  )
  return deleted !== undefined
}

/** Records that the call counter shows a call's deletion (idempotent). */
export async function clearUncountPending(project: string, id: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: { PK: callPk(project, id), SK: 'S' },
      UpdateExpression: 'REMOVE uncount_pending',
    }),
  )
}
