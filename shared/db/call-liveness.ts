import { GetCommand, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb'
import { inParallel, writeBatch } from '#shared/db/batch-write'
import { allShards, callPk, callShard, deletedCallsPk } from '#shared/db/call-keys'
import { db, table } from '#shared/db/client'
import { MAX_KEY_BYTES } from '#shared/db/item-size'

/**
 * Part of the calls boundary (`call-repository.ts`), kept apart so the feedback functions bundle no call listing:
 * whether a call is live, read by key when feedback is written, and the per-project index of deleted calls, one small
 * marker item per call that `calls/delete` reached, written before that delete sets any `deleted_at` (so a call
 * without a marker has never been marked deleted). Counts by feedback read the markers instead of every call
 * (`shared/tracing/call-feedback-count.ts`; docs/data-model.md, "Counting calls by feedback").
 */

const WRITE_BATCH = 25

/**
 * Whether the call has a start part without `deleted_at`, read strongly by key (projected to `id, deleted_at`); false
 * without a read for an id no stored call can have (its key over DynamoDB's 2,048 bytes).
 */
export async function isCallLive(project: string, id: string): Promise<boolean> {
  const pk = callPk(project, id)
  if (Buffer.byteLength(pk, 'utf8') > MAX_KEY_BYTES.partition) return false
  const { Item } = await db().send(
    new GetCommand({
      TableName: table(),
      Key: { PK: pk, SK: 'S' },
      ConsistentRead: true,
      ProjectionExpression: 'id, deleted_at',
    }),
  )
  return Item?.id !== undefined && Item.deleted_at === undefined
}

/** Writes a deletion marker for each call (plain puts: a retried delete rewrites the same items, never adds any). */
export async function recordCallDeletions(project: string, ids: readonly string[]): Promise<void> {
  const items = [...new Set(ids)].map((id) => ({ PK: deletedCallsPk(project, callShard(id)), SK: id }))
  const chunks: (typeof items)[] = []
  for (let i = 0; i < items.length; i += WRITE_BATCH) chunks.push(items.slice(i, i + WRITE_BATCH))
  await inParallel(chunks, 8, (chunk) => writeBatch(chunk.map((Item) => ({ PutRequest: { Item } }))))
}

/**
 * The ids of the project's deletion markers, read strongly (every marker of a delete that answered is seen);
 * undefined once more than `atMost` are found: the caller then reads its candidates by key instead.
 */
export async function readDeletedCallIds(project: string, atMost: number): Promise<Set<string> | undefined> {
  const ids = new Set<string>()
  let over = false
  await Promise.all(
    allShards((shard) => deletedCallsPk(project, shard)).map(async (pk) => {
      let startKey: Record<string, unknown> | undefined
      do {
        const page: QueryCommandOutput = await db().send(
          new QueryCommand({
            TableName: table(),
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': pk },
            ProjectionExpression: 'SK',
            ConsistentRead: true,
            Limit: atMost + 1,
            ExclusiveStartKey: startKey,
          }),
        )
        for (const item of page.Items ?? []) ids.add(String(item.SK))
        if (ids.size > atMost) over = true
        startKey = page.LastEvaluatedKey
      } while (startKey !== undefined && !over)
    }),
  )
  return over ? undefined : ids
}
