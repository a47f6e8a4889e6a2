import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'

// DynamoDB's per-request limits (BatchWriteItem: 25 requests, BatchGetItem: 100 keys).
const WRITE_BATCH = 25
const GET_BATCH = 100
const MAX_ROUNDS = 12

function pause(round: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(1000, 10 * 2 ** round)))
}

async function inParallel<T>(tasks: T[], concurrency: number, run: (task: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++] as T
      await run(task)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker))
}

/**
 * Puts items with `BatchWriteItem` (25 per request, a few requests in flight), retrying `UnprocessedItems` with
 * backoff; BatchWriteItem is not atomic, so callers must only write items whose keys make a repeat harmless.
 */
export async function putAll(items: Record<string, unknown>[], concurrency = 8): Promise<void> {
  const batches: Record<string, unknown>[][] = []
  for (let i = 0; i < items.length; i += WRITE_BATCH) batches.push(items.slice(i, i + WRITE_BATCH))
  await inParallel(batches, concurrency, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }))
    for (let round = 0; requests.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error(`BatchWriteItem left ${requests.length} items unprocessed`)
      if (round > 0) await pause(round)
      const out = await db().send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }))
      requests = (out.UnprocessedItems?.[table()] ?? []) as typeof requests
    }
  })
}

/** Reads items by key with `BatchGetItem` (100 keys per request), retrying `UnprocessedKeys`; order is not kept. */
export async function getAll(keys: Record<string, unknown>[], concurrency = 4): Promise<Record<string, unknown>[]> {
  const batches: Record<string, unknown>[][] = []
  for (let i = 0; i < keys.length; i += GET_BATCH) batches.push(keys.slice(i, i + GET_BATCH))
  const found: Record<string, unknown>[] = []
  await inParallel(batches, concurrency, async (batch) => {
    let pending = batch
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed`)
      if (round > 0) await pause(round)
      const out = await db().send(
        new BatchGetCommand({ RequestItems: { [table()]: { Keys: pending, ConsistentRead: true } } }),
      )
      found.push(...(out.Responses?.[table()] ?? []))
      pending = (out.UnprocessedKeys?.[table()]?.Keys ?? []) as Record<string, unknown>[]
    }
  })
  return found
}
