import { PutCommand } from '@aws-sdk/lib-dynamodb'
import { deleteAll } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { queryAll } from '#shared/db/query'

// DynamoDB items stop at 400 KB. Values up to INLINE_LIMIT stay in their owner's item (`<prefix>_text` or
// `<prefix>_bin`); larger ones are split into CHUNK_BYTES pieces under PK=BLOB#<owner>#<prefix>, written before the
// owner item so an owner never points at missing chunks. Chunks are keyed by position, so a retry rewrites the same
// items instead of adding new ones.
const INLINE_LIMIT = 300 * 1024
const CHUNK_BYTES = 350 * 1024

/** Attributes to merge into the owner item for a stored value. */
export type StoredValueAttrs = Record<string, string | number | Uint8Array>

const blobPk = (owner: string, prefix: string) => `BLOB#${owner}#${prefix}`
const ownerOf = (item: Record<string, unknown>) => `${item.PK}|${item.SK}`

async function writeChunks(owner: string, prefix: string, bytes: Uint8Array): Promise<StoredValueAttrs> {
  const count = Math.ceil(bytes.length / CHUNK_BYTES)
  for (let i = 0; i < count; i++) {
    const data = bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES)
    const SK = `CHUNK#${String(i).padStart(6, '0')}`
    await db().send(new PutCommand({ TableName: table(), Item: { PK: blobPk(owner, prefix), SK, data } }))
  }
  return { [`${prefix}_chunks`]: count, [`${prefix}_bytes`]: bytes.length }
}

/** Stores a text value whole for the owner item `<PK>|<SK>`, splitting it when it exceeds the item limit. */
export async function storeValue(owner: string, text: string, prefix = 'value'): Promise<StoredValueAttrs> {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= INLINE_LIMIT) return { [`${prefix}_text`]: text }
  return writeChunks(owner, prefix, bytes)
}

/** Stores raw bytes whole for the owner item `<PK>|<SK>` (files), splitting them when large. */
export async function storeBytes(owner: string, bytes: Uint8Array, prefix = 'value'): Promise<StoredValueAttrs> {
  if (bytes.length <= INLINE_LIMIT) return { [`${prefix}_bin`]: bytes }
  return writeChunks(owner, prefix, bytes)
}

async function readChunks(item: Record<string, unknown>, prefix: string): Promise<Buffer> {
  const count = Number(item[`${prefix}_chunks`])
  const size = Number(item[`${prefix}_bytes`])
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
    ExpressionAttributeValues: { ':pk': blobPk(ownerOf(item), prefix), ':sk': 'CHUNK#' },
    ConsistentRead: true,
  })
  const joined = Buffer.concat(items.slice(0, count).map((i) => Buffer.from(i.data as Uint8Array)))
  if (items.length < count || joined.length !== size) throw new Error(`Stored value of ${ownerOf(item)} is incomplete`)
  return joined
}

/** Reads back a text value stored with `storeValue`, byte-identical. */
export async function readStoredValue(item: Record<string, unknown>, prefix = 'value'): Promise<string> {
  const inline = item[`${prefix}_text`]
  if (typeof inline === 'string') return inline
  return (await readChunks(item, prefix)).toString('utf8')
}

/** Reads back bytes stored with `storeBytes`, byte-identical. */
export async function readStoredBytes(item: Record<string, unknown>, prefix = 'value'): Promise<Buffer> {
  const inline = item[`${prefix}_bin`]
  if (inline instanceof Uint8Array) return Buffer.from(inline)
  return readChunks(item, prefix)
}

/** Deletes the chunks of a split value (the owner item is the caller's to delete). */
export async function deleteStoredValue(owner: string, prefix = 'value'): Promise<void> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': blobPk(owner, prefix) },
    ProjectionExpression: 'PK, SK',
  })
  await deleteAll(items.map((k) => ({ PK: k.PK, SK: k.SK })))
}
