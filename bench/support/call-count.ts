import { UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { COUNTER_SHARDS } from '#shared/db/call-counter'
import { db, table } from '#shared/db/client'

/**
 * Adds `count` to a project's call counter, spread evenly over its shards as that many counted starts would leave it:
 * for benches that store call items straight through the data layer (which counts nothing) or that stand in for a
 * project far larger than they ingest. Counter keys as `shared/db/call-counter.ts` writes them.
 */
export async function addToCallCount(project: string, count: number): Promise<void> {
  for (let s = 0; s < COUNTER_SHARDS; s++) {
    const share = Math.floor(count / COUNTER_SHARDS) + (s < count % COUNTER_SHARDS ? 1 : 0)
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: `CALLCOUNT#${project}`, SK: `S#${String(s).padStart(2, '0')}` },
        UpdateExpression: 'ADD n :k',
        ExpressionAttributeValues: { ':k': share },
      }),
    )
  }
}
