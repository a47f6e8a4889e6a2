import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb'
import { config } from '#shared/config'
import { db, table } from '#shared/db/client'
import { backoffDelay } from '#shared/db/retry-strategy'
import { dependencyUnavailable } from '#shared/errors/error-response'

// DynamoDB's per-request limits (BatchWriteItem: 25 requests, BatchGetItem: 100 keys).
const WRITE_BATCH = 25
const GET_BATCH = 100
// Items left unprocessed are throttled items: retried a bounded number of rounds, then the request is a 503.
const MAX_ROUNDS = 8

type Item = Record<string, unknown>

/** One request of a `BatchWriteItem`. */
export type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } }

/** Read options of a `BatchGetItem` besides the keys. */
export type BatchGetOptions = {
  ConsistentRead?: boolean
  ProjectionExpression?: string
  ExpressionAttributeNames?: Record<string, string>
}

function pause(round: number): Promise<void> {
  const delay = backoffDelay(round, config.dynamo.retryBaseMs, config.dynamo.retryMaxDelayMs)
  return new Promise((resolve) => setTimeout(resolve, delay))
}

function unprocessed(what: string, count: number) {
  return dependencyUnavailable(new Error(`${what} left ${count} unprocessed after ${MAX_ROUNDS} rounds`))
}

/**
 * Runs `run` over `tasks`, at most `concurrency` at once. On a failure no further task starts, and the first failure
 * is thrown only once every task already started has settled: a caller that compensates for a failed write (reads
 * what is stored, takes a count back) must not read while the write's sibling batches are still being applied.
 */
export async function inParallel<T>(
  tasks: readonly T[],
  concurrency: number,
  run: (task: T) => Promise<void>,
): Promise<void> {
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < tasks.length) {
      const task = tasks[next++] as T
      try {
        await run(task)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  const results = await Promise.allSettled(Array.from({ length: Math.min(concurrency, tasks.length) }, worker))
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failure !== undefined) throw failure.reason
}

/**
 * How many DynamoDB requests one Loom request keeps in flight when it sends one per item (a call's mark, a trace's
 * size): the SDK's socket pool queues the rest, and a request queued past the connect timeout (1 s) fails, so a
 * trace of thousands of calls must not send thousands at once.
 */
export const ITEM_REQUESTS_IN_FLIGHT = 16

/** `run` over `tasks`, at most `concurrency` at once, with the results in task order (the first failure thrown as `inParallel` throws it). */
export async function mapInParallel<T, R>(
  tasks: readonly T[],
  concurrency: number,
  run: (task: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(tasks.length)
  const indexes = tasks.map((_, i) => i)
  await inParallel(indexes, concurrency, async (i) => {
    results[i] = await run(tasks[i] as T)
  })
  return results
}

/** `Promise.allSettled` of `run` over `tasks`, at most `concurrency` at once: every task runs, whatever the others do. */
export async function settleInParallel<T, R>(
  tasks: readonly T[],
  concurrency: number,
  run: (task: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(tasks.length)
  const indexes = tasks.map((_, i) => i)
  await inParallel(indexes, concurrency, async (i) => {
    try {
      results[i] = { status: 'fulfilled', value: await run(tasks[i] as T) }
    } catch (reason) {
      results[i] = { status: 'rejected', reason }
    }
  })
  return results
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/**
 * Sends one `BatchWriteItem` (at most 25 requests), retrying `UnprocessedItems` with full-jitter backoff for a
 * bounded number of rounds, then failing with a 503. Not atomic: a repeat of the requests must be harmless.
 */
export async function writeBatch(requests: readonly WriteRequest[]): Promise<void> {
  let pending = [...requests]
  for (let round = 0; pending.length > 0; round++) {
    if (round >= MAX_ROUNDS) throw unprocessed('BatchWriteItem', pending.length)
    if (round > 0) await pause(round)
    const out = await db().send(new BatchWriteCommand({ RequestItems: { [table()]: pending } }))
    pending = (out.UnprocessedItems?.[table()] ?? []) as WriteRequest[]
  }
}

/** Sends one `BatchGetItem` (at most 100 keys), retrying `UnprocessedKeys` like `writeBatch`; order is not kept. */
export async function getBatch(keys: readonly Item[], options: BatchGetOptions = {}): Promise<Item[]> {
  const found: Item[] = []
  let pending = [...keys]
  for (let round = 0; pending.length > 0; round++) {
    if (round >= MAX_ROUNDS) throw unprocessed('BatchGetItem', pending.length)
    if (round > 0) await pause(round)
    const out = await db().send(new BatchGetCommand({ RequestItems: { [table()]: { ...options, Keys: pending } } }))
    found.push(...(out.Responses?.[table()] ?? []))
    pending = (out.UnprocessedKeys?.[table()]?.Keys ?? []) as Item[]
  }
  return found
}

/**
 * Puts items with `BatchWriteItem` (25 per request, a few requests in flight), each through `writeBatch`;
 * BatchWriteItem is not atomic, so callers must only write items whose keys make a repeat harmless.
 */
export async function putAll(items: Item[], concurrency = 8): Promise<void> {
  await inParallel(chunks(items, WRITE_BATCH), concurrency, (batch) =>
    writeBatch(batch.map((Item) => ({ PutRequest: { Item } }))),
  )
}

/** Deletes items by key with `BatchWriteItem` (25 per request, sequentially); deleting a missing key is a no-op. */
export async function deleteAll(keys: readonly Item[]): Promise<void> {
  for (const batch of chunks(keys, WRITE_BATCH)) await writeBatch(batch.map((Key) => ({ DeleteRequest: { Key } })))
}

/** Reads items by key with `BatchGetItem` (100 keys per request, consistent), each through `getBatch`; order is not kept. */
export async function getAll(keys: Item[], concurrency = 4): Promise<Item[]> {
  const found: Item[] = []
  await inParallel(chunks(keys, GET_BATCH), concurrency, async (batch) => {
    found.push(...(await getBatch(batch, { ConsistentRead: true })))
  })
  return found
}
