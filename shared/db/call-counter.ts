import { createHash } from 'node:crypto'
import { UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { getBatch, inParallel } from '#shared/db/batch-write'
import { callPk } from '#shared/db/call-keys'
import { db, table } from '#shared/db/client'
import { ifConditionHolds } from '#shared/db/conditional-write'
import { queryAll } from '#shared/db/query'

/**
 * The storage of the call counting protocol; the protocol itself, with its invariants, is `shared/tracing/call-count.ts`,
 * the only caller of the writes here (`readCallCount` is for anyone). The per-project count of live calls is kept in
 * `COUNTER_SHARDS` hot-counter items (`PK = CALLCOUNT#<project>`, `SK = S#<nn>`) and summed on read, so the unfiltered
 * `calls/query_stats` reads 16 small items instead of the project.
 *
 * `ADD` is not idempotent, so every increment is guarded by idempotency tokens (`+<call id>`, `-<call id>`) held in
 * the `pending` string set of the shard the token's hash picks while the request that counted them finishes its item writes: the `ADD` is
 * conditional on none of its tokens being pending, so a token also works as a lock on its call's count. A pending token
 * always means its delta is in `n` (a take-back that gives a token up removes it in the same update), and only its
 * holder releases it, once the call items show the change. The marks the protocol keeps on a call's start part
 * (`counted`, `uncount_pending`) are read and written at the end of this module.
 */

/** Number of counter shards per project. */
export const COUNTER_SHARDS = 16

// Keeps the condition expression well under DynamoDB's 4 KB expression limit.
const TOKENS_PER_UPDATE = 60

const counterPk = (project: string) => `CALLCOUNT#${project}`

function shardOf(token: string): string {
  const n = createHash('sha256').update(token).digest().readUInt32BE(0) % COUNTER_SHARDS
  return `S#${String(n).padStart(2, '0')}`
}

function inGroups<T>(items: readonly T[]): T[][] {
  const groups: T[][] = []
  for (let i = 0; i < items.length; i += TOKENS_PER_UPDATE) groups.push(items.slice(i, i + TOKENS_PER_UPDATE))
  return groups
}

async function addGuarded(key: Record<string, string>, tokens: string[], delta: number): Promise<boolean> {
  const values: Record<string, unknown> = { ':k': delta * tokens.length, ':set': new Set(tokens) }
  const clauses = tokens.map((t, i) => {
    values[`:t${i}`] = t
    return `NOT contains(pending, :t${i})`
  })
  const added = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: key,
        UpdateExpression: 'ADD #n :k, pending :set',
        // AND binds tighter than OR, so this is `missing OR (all absent)`. Written without the parentheses: dynalite's
        // expression parser takes about 4x as long on a parenthesised list of 60 clauses (no difference on AWS).
        ConditionExpression: `attribute_not_exists(pending) OR ${clauses.join(' AND ')}`,
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: values,
      }),
    ),
  )
  return added !== undefined
}

/** What `countCalls` did: the tokens it counted (and holds pending), how to take some back, and the release. */
export type CallCount = {
  counted: readonly string[]
  /** Takes back the count of tokens this request counted but must not (their change was already counted). */
  undo: (tokens: readonly string[]) => Promise<void>
  /** Releases every counted token: call once the call items show what was counted. */
  release: () => Promise<void>
  /**
   * Takes back `undo` (counted tokens not taken back yet) and releases every counted token except `hold`, each take-back
   * in the same update as its release; a held token stays pending for good, its delta counted.
   */
  finish: (undo: readonly string[], hold?: ReadonlySet<string>) => Promise<void>
}

async function countOnShard(project: string, shard: string, tokens: readonly string[], delta: 1 | -1) {
  const key = { PK: counterPk(project), SK: shard }
  const counted: string[] = []
  for (const group of inGroups(tokens)) {
    if (await addGuarded(key, group, delta)) {
      counted.push(...group)
      continue
    }
    // Some token is pending from an earlier or concurrent attempt: count the others one by one.
    for (const token of group) if (await addGuarded(key, [token], delta)) counted.push(token)
  }
  const undone = new Set<string>()
  const send = (update: string, values: Record<string, unknown>, names?: Record<string, string>) =>
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: key,
        UpdateExpression: update,
        ExpressionAttributeValues: values,
        ...(names === undefined ? {} : { ExpressionAttributeNames: names }),
      }),
    )
  const mine = (tokens: readonly string[]) => {
    const held = new Set(counted)
    return [...new Set(tokens)].filter((t) => held.has(t) && !undone.has(t))
  }
  async function undo(tokens: readonly string[]) {
    const taken = mine(tokens)
    if (taken.length === 0) return
    await send('ADD #n :k', { ':k': -delta * taken.length }, { '#n': 'n' })
    for (const t of taken) undone.add(t)
  }
  // Released tokens are never released again: another request may hold them by then.
  const released = new Set<string>()
  async function finish(tokens: readonly string[], hold: ReadonlySet<string> = new Set()) {
    const taken = new Set(mine(tokens).filter((t) => !hold.has(t) && !released.has(t)))
    for (const group of inGroups(counted.filter((t) => !hold.has(t) && !released.has(t)))) {
      const k = group.filter((t) => taken.has(t)).length
      if (k === 0) await send('DELETE pending :set', { ':set': new Set(group) })
      else await send('ADD #n :k DELETE pending :set', { ':k': -delta * k, ':set': new Set(group) }, { '#n': 'n' })
      for (const t of group) {
        released.add(t)
        if (taken.has(t)) undone.add(t)
      }
    }
  }
  return { counted, undo, finish, release: () => finish([]) } satisfies CallCount
}

/**
 * Adds `delta` per token to the project's count unless a token is already pending (a retry, or a concurrent attempt),
 * and returns what it counted with the functions that take counts back and release the tokens once the caller's item
 * writes are done. Each token is counted on the shard its own hash picks, so every request counting a call's token
 * meets the others counting it there, whatever else its body holds (one update per shard touched, in parallel).
 */
export async function countCalls(project: string, tokens: readonly string[], delta: 1 | -1): Promise<CallCount> {
  const byShard = new Map<string, string[]>()
  for (const token of new Set(tokens)) {
    const shard = shardOf(token)
    const group = byShard.get(shard)
    if (group === undefined) byShard.set(shard, [token])
    else group.push(token)
  }
  const parts = await Promise.all([...byShard].map(([shard, group]) => countOnShard(project, shard, group, delta)))
  return {
    counted: parts.flatMap((p) => p.counted),
    undo: async (tokens) => {
      await Promise.all(parts.map((p) => p.undo(tokens)))
    },
    release: async () => {
      await Promise.all(parts.map((p) => p.release()))
    },
    finish: async (tokens, hold) => {
      await Promise.all(parts.map((p) => p.finish(tokens, hold)))
    },
  }
}

/** The tokens among `tokens` still pending on their shards (read strongly). */
export async function pendingTokens(project: string, tokens: readonly string[]): Promise<Set<string>> {
  const shards = [...new Set(tokens.map(shardOf))]
  if (shards.length === 0) return new Set()
  const items = await getBatch(
    shards.map((shard) => ({ PK: counterPk(project), SK: shard })),
    { ConsistentRead: true, ProjectionExpression: 'pending' },
  )
  const pending = new Set<string>()
  for (const item of items) if (item.pending instanceof Set) for (const t of item.pending as Set<string>) pending.add(t)
  return new Set(tokens.filter((t) => pending.has(t)))
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

/** What the counting protocol needs to know of a stored start part. */
export type StartCountState = { counted: boolean; uncountPending: string | undefined }

/** The count state of each call among `ids` that has a stored start part, read strongly (projected). */
export async function startCountStates(project: string, ids: readonly string[]): Promise<Map<string, StartCountState>> {
  const found = new Map<string, StartCountState>()
  const keys = [...new Set(ids)].map((id) => ({ PK: callPk(project, id), SK: 'S' }))
  const chunks: (typeof keys)[] = []
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100))
  // As many requests in flight as the call writes allow (call-repository.ts).
  await inParallel(chunks, 16, async (chunk) => {
    const options = { ConsistentRead: true, ProjectionExpression: 'id, counted, uncount_pending' }
    for (const item of await getBatch(chunk, options)) {
      const pending = typeof item.uncount_pending === 'string' ? item.uncount_pending : undefined
      found.set(item.id as string, { counted: item.counted === true, uncountPending: pending })
    }
  })
  return found
}

/** The ids among `ids` whose stored start was written by a request that counted it (`counted`), read strongly. */
export async function countedStarts(project: string, ids: readonly string[]): Promise<Set<string>> {
  const states = await startCountStates(project, ids)
  return new Set([...states].flatMap(([id, s]) => (s.counted ? [id] : [])))
}

/** Marks a stored start as counted (for a start stored by a writer that did not count it). */
export async function markStartCounted(project: string, id: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: { PK: callPk(project, id), SK: 'S' },
      UpdateExpression: 'SET counted = :t',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':t': true },
    }),
  )
}

/**
 * Soft-deletes a call's start part unless it is deleted already, recording `uncount_pending` (the deleting request's
 * id) until the call counter shows the deletion; returns whether this write deleted it.
 */
export async function markCallDeleted(
  project: string,
  id: string,
  deletedAt: string,
  requestId: string,
): Promise<boolean> {
  const deleted = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: callPk(project, id), SK: 'S' },
        UpdateExpression: 'SET deleted_at = :d, uncount_pending = :r',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(deleted_at)',
        ExpressionAttributeValues: { ':d': deletedAt, ':r': requestId },
      }),
    ),
  )
  return deleted !== undefined
}

/** Records that the call counter shows a call's deletion (idempotent). */
export async function clearUncountPending(project: string, id: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: { PK: callPk(project, id), SK: 'S' },
      UpdateExpression: 'REMOVE uncount_pending',
    }),
  )
}
