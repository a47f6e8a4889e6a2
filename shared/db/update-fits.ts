import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { itemBytes, MAX_ITEM_BYTES } from '#shared/db/item-size'
import { ItemTooLargeError } from '#shared/errors/storage-limit-errors'

/**
 * Throws `ItemTooLargeError` (413) when setting `changes` (top-level attributes; `undefined` removes one) on the item
 * stored at `key` would take it past DynamoDB's 400 KB, counted in UTF-8 bytes as DynamoDB counts them. DynamoDB
 * refuses such an update itself, but dynalite counts string characters and lets one that grows an item with multibyte
 * text through, so the updates that grow an item with a caller's text check first, and every engine answers alike.
 * One strongly consistent read of the item; a missing item passes (the update's own condition answers for it).
 */
export async function assertUpdateFits(key: Record<string, string>, changes: Record<string, unknown>): Promise<void> {
  // A read that fails (a key no engine stores, a throttled read) leaves the decision to the update itself, as before.
  const read = await db()
    .send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))
    .catch(() => undefined)
  const Item = read?.Item
  if (Item === undefined) return
  const size = itemBytes({ ...Item, ...changes })
  if (size > MAX_ITEM_BYTES) {
    throw new ItemTooLargeError(
      `The update would make the stored item ${size} bytes, over DynamoDB's 400 KB item limit`,
    )
  }
}
