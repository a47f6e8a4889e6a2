import { PutCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { queryAll } from '#shared/db/query'

// DynamoDB items stop at 400 KB. Values up to INLINE_LIMIT stay in their owner's item; larger ones are split into
// CHUNK_BYTES pieces under PK=BLOB#<owner>, written before the owner item so an owner never points at missing chunks.
const INLINE_LIMIT = 300 * 1024
const CHUNK_BYTES = 350 * 1024

/** Attributes to merge into the owner item for a stored text value: inline, or a chunk count when split. */
export type StoredValueAttrs = { value_text: string } | { value_chunks: number; value_bytes: number }

/** Stores a text value whole for an owner item (splitting it across items when it exceeds the item limit). */
export async function storeValue(owner: string, text: string): Promise<StoredValueAttrs> {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= INLINE_LIMIT) return { value_text: text }
  const count = Math.ceil(bytes.length / CHUNK_BYTES)
  for (let i = 0; i < count; i++) {
    // Binary chunks: a split never cuts a UTF-8 character in a way that corrupts the value, since bytes join back.
    const data = bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES)
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: { PK: `BLOB#${owner}`, SK: `CHUNK#${String(i).padStart(6, '0')}`, data },
      }),
    )
  }
  return { value_chunks: count, value_bytes: bytes.length }
}

/** Stores raw bytes whole for an owner item (files): inline as binary when small, else split. */
export async function storeBytes(
  owner: string,
  bytes: Uint8Array,
): Promise<{ value_bin: Uint8Array } | { value_chunks: number; value_bytes: number }> {
  if (bytes.length <= INLINE_LIMIT) return { value_bin: bytes }
  const count = Math.ceil(bytes.length / CHUNK_BYTES)
  for (let i = 0; i < count; i++) {
    const data = bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES)
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: { PK: `BLOB#${owner}`, SK: `CHUNK#${String(i).padStart(6, '0')}`, data },
      }),
    )
  }
  return { value_chunks: count, value_bytes: bytes.length }
}

async function readChunks(owner: string, count: number, size: number): Promise<Buffer> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
    ExpressionAttributeValues: { ':pk': `BLOB#${owner}`, ':sk': 'CHUNK#' },
    ConsistentRead: true,
  })
  const joined = Buffer.concat(items.slice(0, count).map((i) => Buffer.from(i.data as Uint8Array)))
  if (items.length < count || joined.length !== size) throw new Error(`Stored value of ${owner} is incomplete`)
  return joined
}

/** Reads back a text value stored with `storeValue`, byte-identical. */
export async function readStoredValue(item: Record<string, unknown>): Promise<string> {
  if (typeof item.value_text === 'string') return item.value_text
  return (await readChunks(`${item.PK}|${item.SK}`, Number(item.value_chunks), Number(item.value_bytes))).toString(
    'utf8',
  )
}

/** Reads back bytes stored with `storeBytes`, byte-identical. */
export async function readStoredBytes(item: Record<string, unknown>): Promise<Buffer> {
  if (item.value_bin instanceof Uint8Array) return Buffer.from(item.value_bin)
  return readChunks(`${item.PK}|${item.SK}`, Number(item.value_chunks), Number(item.value_bytes))
}
