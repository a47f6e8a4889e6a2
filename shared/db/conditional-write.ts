import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb'
import { PutCommand, UpdateCommand, type UpdateCommandInput, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { ConflictError } from '#shared/errors/http-error'

// Conditional writes (docs/architecture.md, "Conditional writes"): the data layer's one place that turns DynamoDB's
// refusal of a write's condition into a value. Every other error, and the refusal where a caller cannot explain it,
// is thrown unchanged. Each helper sends exactly one request (plus the caller's own read on `putIfAbsentOrRead`), so
// the DynamoDB actions a code path calls, and its IAM policy, stay what they were.

/** True when DynamoDB refused a write because its `ConditionExpression` did not hold. */
export function isConditionFailed(error: unknown): error is ConditionalCheckFailedException {
  return error instanceof ConditionalCheckFailedException
}

/**
 * Awaits a conditional write: its output, or undefined when its condition did not hold; other errors are thrown.
 * @example
 * const released = await ifConditionHolds(db().send(new DeleteCommand({ TableName: table(), Key, ConditionExpression })))
 */
export async function ifConditionHolds<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write
  } catch (error) {
    if (isConditionFailed(error)) return undefined
    throw error
  }
}

/**
 * Puts an item unless one with its key exists (`attribute_not_exists(PK)`): `'exists'` leaves the stored item as it
 * is, so a retried put (the SDK's own after a lost answer included) never overwrites or duplicates.
 */
export async function putIfAbsent(item: Record<string, unknown>): Promise<'written' | 'exists'> {
  const written = await ifConditionHolds(
    db().send(new PutCommand({ TableName: table(), Item: item, ConditionExpression: 'attribute_not_exists(PK)' })),
  )
  return written === undefined ? 'exists' : 'written'
}

// Puts tried by `putIfAbsentOrRead` while the key keeps being taken and freed under it.
const PUT_OR_READ_ATTEMPTS = 3

/**
 * `putIfAbsent` that, when the key exists, returns what `read` finds there (read it strongly consistent). When `read`
 * finds nothing, the item was deleted between the put and the read (a create racing a delete of the same name): the
 * key is free again, so the put is tried again; a 409 after a few such rounds.
 */
export async function putIfAbsentOrRead<T>(
  item: Record<string, unknown>,
  read: () => Promise<T | undefined>,
): Promise<{ written: true } | { written: false; existing: T }> {
  for (let attempt = 0; attempt < PUT_OR_READ_ATTEMPTS; attempt++) {
    const written = await ifConditionHolds(
      db().send(new PutCommand({ TableName: table(), Item: item, ConditionExpression: 'attribute_not_exists(PK)' })),
    )
    if (written !== undefined) return { written: true }
    const existing = await read()
    if (existing !== undefined) return { written: false, existing }
  }
  throw new ConflictError('The item was changed by another request while this one wrote it; retry the request')
}

/** An update for `updateIfExists`: everything but the table and the condition. */
export type UpdateIfExistsInput = Omit<UpdateCommandInput, 'TableName' | 'ConditionExpression'>

/**
 * Updates an item only if it exists (`attribute_exists(PK)`), so an update never creates a partial item: the
 * update's output, or undefined when there is no such item.
 */
export async function updateIfExists(input: UpdateIfExistsInput): Promise<UpdateCommandOutput | undefined> {
  return ifConditionHolds(
    db().send(new UpdateCommand({ ...input, TableName: table(), ConditionExpression: 'attribute_exists(PK)' })),
  )
}
