import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb'
import { PutCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'

/** Claims a one-time marker (`MARKER#<name>`); true for exactly one caller, however often or concurrently it runs. */
export async function claimMarker(name: string, at: string): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: { PK: `MARKER#${name}`, SK: 'MARKER', claimedAt: at },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    )
    return true
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false
    throw error
  }
}
