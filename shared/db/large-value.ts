import { createHash } from 'node:crypto'
import { QueryCommand } from '@aws-sdk/lib-dynamodb'
import { deleteAll, writeBatch } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'

/**
 * Values larger than DynamoDB's 400 KB item limit, stored whole: the bytes are split into chunk items that live under
 * the owner's partition key, beside the owner item, and reassembled byte-identically on read. Chunk sort keys carry a
 * content hash, so writing the same value again is idempotent and writing a different value never corrupts the chunks
 * an existing owner item still points at (write the chunks first, then the owner item holding the ref).
 *
 * Layout: `PK = <owner.pk>`, `SK = <owner.skPrefix>#LV#<sha256 hex, 32 chars>#<index, 5 digits>`, attribute `data`
 * (binary, at most `CHUNK_BYTES`).
 */

/** Bytes per chunk item: below 400 KB with room for the keys and attribute names. */
export const CHUNK_BYTES = 380_000

/** Values up to this many UTF-8 bytes should stay inline in the owner item (callers decide; see `storeJson`). */
export const INLINE_LIMIT_BYTES = 64_000

/** Where chunk items live: the owner's partition key and a sort-key prefix unique to the owner (and the field). */
export type LargeValueOwner = { pk: string; skPrefix: string }

/** A pointer to a chunked value, stored in the owner item: content hash, chunk count and total byte length. */
export type LargeValueRef = { hash: string; chunks: number; bytes: number }

/** A JSON value as kept in an owner item: inline JSON text, or a ref to chunk items holding that text's bytes. */
export type StoredJson = { json: string } | { ref: LargeValueRef }

const chunkSk = (owner: LargeValueOwner, hash: string, index: number) =>
  `${owner.skPrefix}#LV#${hash}#${String(index).padStart(5, '0')}`

/** Splits `bytes` into chunk items under `owner` (idempotent, retrying unprocessed items) and returns the ref. */
export async function putLargeValue(owner: LargeValueOwner, bytes: Uint8Array): Promise<LargeValueRef> {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 32)
  const chunks = Math.max(1, Math.ceil(bytes.byteLength / CHUNK_BYTES))
  const items = Array.from({ length: chunks }, (_, i) => ({
    PK: owner.pk,
    SK: chunkSk(owner, hash, i),
    data: bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES),
  }))
  // A BatchWriteItem request is capped at 16 MB, so a few chunks per request.
  for (let i = 0; i < items.length; i += 10) {
    await writeBatch(items.slice(i, i + 10).map((Item) => ({ PutRequest: { Item } })))
  }
  return { hash, chunks, bytes: bytes.byteLength }
}

/** Reads the chunk items a ref points at and returns the original bytes; throws when a chunk is missing. */
export async function getLargeValue(owner: LargeValueOwner, ref: LargeValueRef): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :a AND :b',
        ExpressionAttributeValues: {
          ':pk': owner.pk,
          ':a': chunkSk(owner, ref.hash, 0),
          ':b': chunkSk(owner, ref.hash, ref.chunks - 1),
        },
        ExclusiveStartKey: startKey,
        // The item naming this value is read right after its writer stored the chunks; an eventually consistent
        // read could still miss one of them and fail the read as incomplete.
        ConsistentRead: true,
      }),
    )
    for (const item of page.Items ?? []) parts.push(item.data as Uint8Array)
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  const total = parts.reduce((n, p) => n + p.byteLength, 0)
  if (parts.length !== ref.chunks || total !== ref.bytes) {
    throw new Error(`Large value ${ref.hash} under ${owner.pk} is incomplete (${parts.length}/${ref.chunks} chunks)`)
  }
  return Buffer.concat(parts, total)
}

/** Deletes the chunk items of a ref (idempotent). */
export async function deleteLargeValue(owner: LargeValueOwner, ref: LargeValueRef): Promise<void> {
  const keys = Array.from({ length: ref.chunks }, (_, i) => ({ PK: owner.pk, SK: chunkSk(owner, ref.hash, i) }))
  await deleteAll(keys)
}

/**
 * Keeps JSON text inline when it is at most `inlineLimit` UTF-8 bytes, else stores its bytes as chunks.
 *
 * @example const stored = await storeJson({ pk, skPrefix: 'OUT' }, JSON.stringify(output)); item.output = stored
 */
export async function storeJson(
  owner: LargeValueOwner,
  json: string,
  inlineLimit = INLINE_LIMIT_BYTES,
): Promise<StoredJson> {
  const bytes = Buffer.from(json, 'utf8')
  if (bytes.byteLength <= inlineLimit) return { json }
  return { ref: await putLargeValue(owner, bytes) }
}

/** What `storeJson` would keep in the owner item for `json`, computed without writing (to size the item first). */
export function plannedJson(json: string, inlineLimit = INLINE_LIMIT_BYTES): StoredJson {
  const bytes = Buffer.from(json, 'utf8')
  if (bytes.byteLength <= inlineLimit) return { json }
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 32)
  return { ref: { hash, chunks: Math.max(1, Math.ceil(bytes.byteLength / CHUNK_BYTES)), bytes: bytes.byteLength } }
}

/** Returns the JSON text a `StoredJson` holds, reading its chunks when it is a ref. */
export async function loadJson(owner: LargeValueOwner, stored: StoredJson): Promise<string> {
  if ('json' in stored) return stored.json
  return Buffer.from(await getLargeValue(owner, stored.ref)).toString('utf8')
}
