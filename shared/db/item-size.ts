import { GLOBAL_INDEXES, PRIMARY_KEY } from '#shared/db/table'
import { ItemTooLargeError, KeyTooLongError } from '#shared/errors/storage-limit-errors'

/**
 * DynamoDB's size limits, checked before a write so that a request too large for them is refused whole instead of
 * failing part-way through a batch (dynalite counts string characters where DynamoDB counts UTF-8 bytes, so it lets
 * through what DynamoDB refuses).
 */

/** DynamoDB's item size limit: attribute names and values, in bytes. */
export const MAX_ITEM_BYTES = 400 * 1024

/** The byte limits of a partition key value and of a sort key value (primary key and indexes alike). */
export const MAX_KEY_BYTES = { partition: 2048, sort: 1024 } as const

// An upper bound: DynamoDB stores a number in 1 byte per two significant digits plus one, at most 38 digits.
const NUMBER_BYTES = 21

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8')
  if (typeof value === 'number' || typeof value === 'bigint') return NUMBER_BYTES
  if (typeof value === 'boolean' || value === null) return 1
  if (value instanceof Uint8Array) return value.byteLength
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + valueBytes(v), 0)
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + 1 + valueBytes(v), 3)
  if (typeof value === 'object') return 3 + itemBytes(value as Record<string, unknown>, 1)
  return 0
}

/**
 * The size DynamoDB gives an item (as written through the document client, which drops undefined values): the UTF-8
 * bytes of every attribute name and value, with the list and map overheads; numbers are counted at their maximum.
 */
export function itemBytes(item: Record<string, unknown>, perEntry = 0): number {
  let total = 0
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue
    total += Buffer.byteLength(name, 'utf8') + perEntry + valueBytes(value)
  }
  return total
}

/** The first key attribute of the item (primary or index key) whose value is over DynamoDB's key limit, if any. */
export function oversizedKey(item: Record<string, unknown>): string | undefined {
  const keys = [PRIMARY_KEY, ...GLOBAL_INDEXES].flatMap((k) => [
    [k.partitionKey, MAX_KEY_BYTES.partition] as const,
    [k.sortKey, MAX_KEY_BYTES.sort] as const,
  ])
  for (const [name, limit] of keys) {
    const value = item[name]
    if (typeof value === 'string' && Buffer.byteLength(value, 'utf8') > limit) return name
  }
  return undefined
}

/**
 * Throws the typed 4xx for an item (as the document client would write it) that DynamoDB's limits would refuse: a
 * key value over its byte limit (400) or an item over 400 KB with `reservedBytes` kept for later updates (413). Called
 * before the first write of an operation that writes several items, so a refusal never leaves part of it written.
 */
export function assertItemFits(item: Record<string, unknown>, what: string, reservedBytes = 0): void {
  const key = oversizedKey(item)
  if (key !== undefined) {
    const limit = key.endsWith('PK') ? MAX_KEY_BYTES.partition : MAX_KEY_BYTES.sort
    throw new KeyTooLongError(`A value of the ${what} is too long to store as a key (at most ${limit} bytes)`)
  }
  const size = itemBytes(item) + reservedBytes
  if (size > MAX_ITEM_BYTES) {
    throw new ItemTooLargeError(`The ${what} is too large to store (${size} bytes, at most ${MAX_ITEM_BYTES})`)
  }
}
