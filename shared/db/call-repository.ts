import { PutCommand } from '@aws-sdk/lib-dynamodb'
import { getBatch, inParallel, writeBatch } from '#shared/db/batch-write'
import { callPk, LEAN_PROJECTION } from '#shared/db/call-keys'
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
 * `call-index-walk.ts`. Offered here: writes of parts (`putCallParts`, `putStartsIfAbsent`), reads by id
 * (`getCallParts`, `storedTraceIds`) and the display name; in `call-listing.ts`: listings walked page by page
 * (`walkCalls`: a trace, parents, threads, ops, the roots or the project timeline), trace sizes (`traceStorageSize`)
 * and the existence probe (`countStartedCalls`). The count marks on start parts belong to the counting protocol (`shared/db/call-counter.ts`,
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

/**
 * Runs `run` over `items`, at most MAX_IN_FLIGHT at once; a failure is thrown once the requests already sent have
 * settled (see inParallel): the ingest rollback reads what is stored right after.
 */
export const inPool = <T>(items: readonly T[], run: (item: T) => Promise<void>) => inParallel(items, MAX_IN_FLIGHT, run)

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

/** Adds a raw call item (either part) to the parts map (lean items lack the large columns, which read as empty). */
export function addPart(parts: Map<string, CallParts>, item: Record<string, unknown>): void {
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

/** Reads the wanted parts of the calls `ids` by key (`BatchGetItem`, 100 keys per request) into `into`. */
export async function readParts(
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
