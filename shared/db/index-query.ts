import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb'
import { type BatchGetOptions, getBatch, inParallel } from '#shared/db/batch-write'
import { queryAll } from '#shared/db/query'
import { indexProjects, PRIMARY_KEY } from '#shared/db/table'

/**
 * Reads through the global secondary indexes, whose projections (`shared/db/table.ts`) hold only what their bulk
 * readers read: other readers fetch the items back from the table by key.
 */

type Item = Record<string, unknown>

// BatchGetItem takes at most 100 keys; a few requests in flight per read.
const GET_BATCH = 100
const GET_IN_FLIGHT = 8

const keyString = (item: Item) => `${String(item[PRIMARY_KEY.partitionKey])}\u0000${String(item[PRIMARY_KEY.sortKey])}`

/**
 * The table items of index entries (which always carry the table's keys), in the entries' order, each merged over
 * its entry so the index keys stay (a projected read keeps them for ordering). `BatchGetItem`, 100 keys per request,
 * unprocessed keys retried; eventually consistent, as the index read was. An entry whose item is gone (deleted since
 * the index read) is left out.
 */
export async function fetchFromTable(entries: readonly Item[], options: BatchGetOptions = {}): Promise<Item[]> {
  if (entries.length === 0) return []
  const keys = new Map<string, Item>()
  for (const e of entries) {
    keys.set(keyString(e), { [PRIMARY_KEY.partitionKey]: e.PK, [PRIMARY_KEY.sortKey]: e.SK })
  }
  const all = [...keys.values()]
  const chunks: Item[][] = []
  for (let i = 0; i < all.length; i += GET_BATCH) chunks.push(all.slice(i, i + GET_BATCH))
  const found = new Map<string, Item>()
  await inParallel(chunks, GET_IN_FLIGHT, async (chunk) => {
    for (const item of await getBatch(chunk, options)) found.set(keyString(item), item)
  })
  return entries.flatMap((e) => {
    const item = found.get(keyString(e))
    return item === undefined ? [] : [{ ...e, ...item }]
  })
}

/**
 * A whole Query on an index, returning the items as the caller reads them: straight from the index when its
 * projection holds every attribute in `reads`, otherwise the whole items fetched back from the table
 * (`fetchFromTable`). `reads` undefined means whole items. A filter must name only projected attributes.
 */
export async function queryIndexAll(
  input: Omit<QueryCommandInput, 'TableName' | 'ProjectionExpression'> & { IndexName: string },
  reads?: readonly string[],
): Promise<Item[]> {
  const entries = await queryAll(input)
  if (reads !== undefined && indexProjects(input.IndexName, reads)) return entries
  return fetchFromTable(entries)
}
