import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { putIfAbsent } from '#shared/db/conditional-write'
import { assertItemFits } from '#shared/db/item-size'
import { keyPart } from '#shared/db/key-part'
import { getLargeValue, type LargeValueRef, putLargeValue } from '#shared/db/large-value'

// Files (docs/data-model.md): PK=FILE#<project>#<digest> SK=FILE, bytes inline up to INLINE_BYTES, else chunks
// beside it (large-value, SK=DATA#LV#…). Content-addressed: a repeated upload of the same bytes writes nothing new.

const INLINE_BYTES = 300_000
const filePk = (project: string, digest: string) => `FILE#${keyPart(project)}#${keyPart(digest)}`

const fileItem = (project: string, digest: string, name: string, bytes: Uint8Array, content: object) => ({
  PK: filePk(project, digest),
  SK: 'FILE',
  project_id: project,
  digest,
  name,
  size: bytes.byteLength,
  ...content,
})

/** Throws the 4xx (413) for a file whose item DynamoDB could not store (a huge name); checked before any write. */
export function assertFileFits(project: string, digest: string, name: string, bytes: Uint8Array): void {
  const planned =
    bytes.byteLength <= INLINE_BYTES ? { data: bytes } : { ref: { hash: '0'.repeat(32), chunks: 1, bytes: 1 } }
  assertItemFits(fileItem(project, digest, name, bytes, planned), 'file')
}

/** Stores a file's bytes once per (project, digest). */
export async function putFile(project: string, digest: string, name: string, bytes: Uint8Array): Promise<void> {
  assertFileFits(project, digest, name, bytes)
  const pk = filePk(project, digest)
  const content =
    bytes.byteLength <= INLINE_BYTES ? { data: bytes } : { ref: await putLargeValue({ pk, skPrefix: 'DATA' }, bytes) }
  await putIfAbsent(fileItem(project, digest, name, bytes, content))
}

/** A file's bytes, byte-identical, or undefined when unknown. */
export async function getFile(project: string, digest: string): Promise<Uint8Array | undefined> {
  const pk = filePk(project, digest)
  const { Item } = await db().send(
    new GetCommand({ TableName: table(), Key: { PK: pk, SK: 'FILE' }, ConsistentRead: true }),
  )
  if (Item === undefined) return undefined
  if (Item.data instanceof Uint8Array) return Item.data
  return getLargeValue({ pk, skPrefix: 'DATA' }, Item.ref as LargeValueRef)
}
