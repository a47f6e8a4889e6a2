import { createHash } from 'node:crypto'
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb'
import { UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { queryAll } from '#shared/db/query'

/**
 * The per-project count of live calls, kept in `COUNTER_SHARDS` hot-counter items (`PK = CALLCOUNT#<project>`,
 * `SK = S#<nn>`) and summed on read, so the unfiltered `calls/query_stats` reads 16 small items instead of the project.
 *
 * `ADD` is not idempotent, so every increment is guarded by idempotency tokens (`+<call id>`, `-<call id>`) held in
 * the shard's `pending` string set while the request that counted them finishes its writes: the `ADD` is conditional
 * on none of its tokens being pending, and a retried request (same body, so same shard) finds them there and skips.
 * A retry racing its original may read a call as new, yet count it only after the original released its tokens; so
 * ingest re-reads the calls it counted and takes back those a counting writer already stored (see call-ingest.ts),
 * and deletes count only what their own conditional update marked.
 */

/** Number of counter shards per project. */
export const COUNTER_SHARDS = 16

// Keeps the condition expression well under DynamoDB's 4 KB expression limit.
const TOKENS_PER_UPDATE = 60

const counterPk = (project: string) => `CALLCOUNT#${project}`

function shardOf(seed: string): string {
  const n = createHash('sha256').update(seed).digest().readUInt32BE(0) % COUNTER_SHARDS
  return `S#${String(n).padStart(2, '0')}`
}

async function addGuarded(key: Record<string, string>, tokens: string[], delta: number): Promise<boolean> {
  const values: Record<string, unknown> = { ':k': delta * tokens.length, ':set': new Set(tokens) }
  const clauses = tokens.map((t, i) => {
    values[`:t${i}`] = t
    return `NOT contains(pending, :t${i})`
  })
  try {
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: key,
        UpdateExpression: 'ADD #n :k, pending :set',
        ConditionExpression: `attribute_not_exists(pending) OR (${clauses.join(' AND ')})`,
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: values,
      }),
    )
    return true
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false
    throw error
  }
}

/** What `countCalls` did: the tokens it counted (and holds pending), how to take some back, and the release. */
export type CallCount = {
  counted: readonly string[]
  /** Takes back the count of tokens this request counted but must not (their change was already counted). */
  undo: (tokens: readonly string[]) => Promise<void>
  release: () => Promise<void>
}

/**
 * Adds `delta` per token to the project's count unless a token is already pending (a retry), and returns what it
 * counted with the function that clears the tokens once the caller's item writes are done. `seed` must be derived
 * from the request body (not from what is new), so a retry lands on the same shard.
 */
export async function countCalls(
  project: string,
  tokens: readonly string[],
  delta: 1 | -1,
  seed: string,
): Promise<CallCount> {
  if (tokens.length === 0) return { counted: [], undo: async () => undefined, release: async () => undefined }
  const key = { PK: counterPk(project), SK: shardOf(seed) }
  const groups: string[][] = []
  const counted: string[] = []
  for (let i = 0; i < tokens.length; i += TOKENS_PER_UPDATE) groups.push(tokens.slice(i, i + TOKENS_PER_UPDATE))
  for (const group of groups) {
    if (await addGuarded(key, group, delta)) {
      counted.push(...group)
      continue
    }
    // Some token is pending from an earlier attempt: count the others one by one.
    for (const token of group) if (await addGuarded(key, [token], delta)) counted.push(token)
  }
  async function undo(taken: readonly string[]) {
    if (taken.length === 0) return
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: key,
        UpdateExpression: 'ADD #n :k',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':k': -delta * taken.length },
      }),
    )
  }
  async function release() {
    for (const group of groups) {
      await db().send(
        new UpdateCommand({
          TableName: table(),
          Key: key,
          UpdateExpression: 'DELETE pending :set',
          ExpressionAttributeValues: { ':set': new Set(group) },
        }),
      )
    }
  }
  return { counted, undo, release }
}

/** The project's number of live (started, not deleted) calls: the sum of its counter shards. */
export async function readCallCount(project: string): Promise<number> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': counterPk(project) },
    ProjectionExpression: 'n',
    ConsistentRead: true,
  })
  return items.reduce((sum, item) => sum + Number(item.n ?? 0), 0)
}
