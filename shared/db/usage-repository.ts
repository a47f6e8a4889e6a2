import { UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { db, inBackground, table } from '#shared/db/client'
import { ifConditionHolds } from '#shared/db/conditional-write'
import { keyPart } from '#shared/db/key-part'
import { queryAll } from '#shared/db/query'
import { type UsageCounter, UsageCounterSchema } from '#shared/schemas/usage'

// Keys: PK=USAGE#<entity> SK=H#<yyyy-mm-ddThh>#P#<project>#M#<model>#S#<shard>. Hour first so a time range is one
// Query; the shard (one per writer process) spreads a hot counter over several items, summed on read.

/** Counts added to one counter by one flush. */
export type UsageDelta = Omit<UsageCounter, 'shard'>

/** Who applies a delta: a writer process's id and its flush number, which only grows within that process. */
export type FlushMark = { writer: string; seq: number }

// A long project name (the inference project header is not length-capped) enters the sort key as a digest (keyPart;
// DynamoDB caps sort keys at 1,024 bytes); reads filter on the stored `project` attribute, never on the key.
const keyOf = (d: UsageDelta, shard: number) => ({
  PK: `USAGE#${keyPart(d.entity)}`,
  SK: `H#${d.hour}#P#${keyPart(d.project)}#M#${keyPart(d.model)}#S#${shard}`,
})

// Idempotency: each writer keeps its own attribute `w_<writer id>` on the counter, holding the number of the last of
// its flushes applied there, and a write is refused unless its number is larger. A single "last flush" attribute
// shared by all writers (the earlier design) let a retry through once another flush had landed in between; writers
// share shards (8 shards, any number of processes), so that happens. The meter sends at most one unresolved write per
// counter (newer deltas wait until it is settled), so a writer's last number is the only one it can still retry.
// Bound: one attribute of about 20 bytes per writer process that wrote to this counter item, which lives one hour on
// one shard; the 400 KB item limit would take some 20,000 processes writing one entity's project and model on one
// shard within one hour (160,000 across the shards), far above a region's Lambda concurrency and its turnover.

/**
 * Adds one delta to its hourly counter, at most once per flush mark: a retry of an applied write (the SDK's own, or
 * the meter's after a lost answer) is refused by the condition and counted as done.
 */
export async function addUsage(delta: UsageDelta, shard: number, mark: FlushMark): Promise<void> {
  await ifConditionHolds(
    db().send(
      inBackground(
        new UpdateCommand({
          TableName: table(),
          Key: keyOf(delta, shard),
          // Every name aliased: several (project, hour, shard…) are DynamoDB reserved words.
          UpdateExpression:
            'SET #entity = :e, #project = :p, #model = :m, #hour = :h, #shard = :s, #mark = :seq ' +
            'ADD #requests :r, #aborted :a, #prompt :pt, #completion :ct, #cached :cc, #cost :cost',
          ConditionExpression: 'attribute_not_exists(#mark) OR #mark < :seq',
          ExpressionAttributeNames: {
            '#entity': 'entity',
            '#project': 'project',
            '#model': 'model',
            '#hour': 'hour',
            '#shard': 'shard',
            '#mark': `w_${mark.writer}`,
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
            ':seq': mark.seq,
            ':r': delta.requests,
            ':a': delta.abortedRequests,
            ':pt': delta.promptTokens,
            ':ct': delta.completionTokens,
            ':cc': delta.cachedTokens,
            ':cost': delta.costUsd,
          },
        }),
      ),
    ),
  )
}

/** The counters of an entity between two hours (inclusive, `yyyy-mm-ddThh`), optionally for one project. */
export async function listUsage(entity: string, fromHour: string, toHour: string, project?: string) {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': `USAGE#${keyPart(entity)}`, ':from': `H#${fromHour}`, ':to': `H#${toHour}#~` },
  })
  const counters = items.map((item) => UsageCounterSchema.parse(item))
  return project === undefined ? counters : counters.filter((c) => c.project === project)
}
