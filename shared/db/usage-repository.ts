import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb'
import { UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { queryAll } from '#shared/db/query'
import { type UsageCounter, UsageCounterSchema } from '#shared/schemas/usage'

// Keys: PK=USAGE#<entity> SK=H#<yyyy-mm-ddThh>#P#<project>#M#<model>#S#<shard>. Hour first so a time range is one
// Query; the shard (one per writer process) spreads a hot counter over several items, summed on read.

/** Counts added to one counter by one flush. */
export type UsageDelta = Omit<UsageCounter, 'shard'>

const keyOf = (d: UsageDelta, shard: number) => ({
  PK: `USAGE#${d.entity}`,
  SK: `H#${d.hour}#P#${d.project}#M#${d.model}#S#${shard}`,
})

/**
 * Adds one delta to its hourly counter. `flushId` makes a retried write a no-op: the counter remembers the last
 * flush applied to it, and a write carrying the same id is refused by the condition (and counted as done).
 */
export async function addUsage(delta: UsageDelta, shard: number, flushId: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: keyOf(delta, shard),
        // Every name aliased: several (project, hour, shard…) are DynamoDB reserved words.
        UpdateExpression:
          'SET #entity = :e, #project = :p, #model = :m, #hour = :h, #shard = :s, #lastFlush = :f ' +
          'ADD #requests :r, #aborted :a, #prompt :pt, #completion :ct, #cached :cc, #cost :cost',
        ConditionExpression: 'attribute_not_exists(#lastFlush) OR #lastFlush <> :f',
        ExpressionAttributeNames: {
          '#entity': 'entity',
          '#project': 'project',
          '#model': 'model',
          '#hour': 'hour',
          '#shard': 'shard',
          '#lastFlush': 'lastFlush',
          '#requests': 'requests',
          '#aborted': 'abortedRequests',
          '#prompt': 'promptTokens',
          '#completion': 'completionTokens',
          '#cached': 'cachedTokens',
          '#cost': 'costUsd',
        },
        ExpressionAttributeValues: {
          ':e': delta.entity,
          ':p': delta.project,
          ':m': delta.model,
          ':h': delta.hour,
          ':s': shard,
          ':f': flushId,
          ':r': delta.requests,
          ':a': delta.abortedRequests,
          ':pt': delta.promptTokens,
          ':ct': delta.completionTokens,
          ':cc': delta.cachedTokens,
          ':cost': delta.costUsd,
        },
      }),
    )
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error
  }
}

/** The counters of an entity between two hours (inclusive, `yyyy-mm-ddThh`), optionally for one project. */
export async function listUsage(entity: string, fromHour: string, toHour: string, project?: string) {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': `USAGE#${entity}`, ':from': `H#${fromHour}`, ':to': `H#${toHour}#~` },
  })
  const counters = items.map((item) => UsageCounterSchema.parse(item))
  return project === undefined ? counters : counters.filter((c) => c.project === project)
}
