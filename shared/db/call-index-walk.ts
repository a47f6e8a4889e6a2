import { QueryCommand } from '@aws-sdk/lib-dynamodb'
import { LEAN_ATTRIBUTES, LEAN_PROJECTION } from '#shared/db/call-keys'
import { db, table } from '#shared/db/client'
import { fetchFromTable } from '#shared/db/index-query'
import { indexProjects } from '#shared/db/table'

/**
 * Raw walks over the call indexes (keys in `call-keys.ts`), for `call-repository.ts` only: one partition page by page,
 * several partitions merged in sort-key order. Domain code walks calls through `walkCalls` there.
 */

/**
 * Options of an index walk: `lean` reads every attribute but the large JSON columns, `keysOnly` only the keys (an
 * existence probe); otherwise whole items.
 */
export type IndexWalkOptions = {
  from?: string
  to?: string
  descending?: boolean
  pageSize?: number
  lean?: boolean
  keysOnly?: boolean
}

/**
 * Walks one index partition page by page (1 MB pages), optionally bounded on its sort key, yielding raw items. An
 * index that does not project what the walk reads yields its keys, and each page's items are fetched back from the
 * table (lean ones projected), in index order.
 */
export async function* walkIndex(
  index: string,
  pk: string,
  options: IndexWalkOptions = {},
): AsyncGenerator<Record<string, unknown>[]> {
  const names: Record<string, string> = { '#pk': `${index}PK` }
  const values: Record<string, unknown> = { ':pk': pk }
  let condition = '#pk = :pk'
  if (options.from !== undefined && options.to !== undefined) {
    condition += ' AND #sk BETWEEN :from AND :to'
    values[':from'] = options.from
    values[':to'] = options.to
  } else if (options.from !== undefined) {
    condition += ' AND #sk >= :from'
    values[':from'] = options.from
  } else if (options.to !== undefined) {
    condition += ' AND #sk <= :to'
    values[':to'] = options.to
  }
  if (options.from !== undefined || options.to !== undefined) names['#sk'] = `${index}SK`
  const reads = options.keysOnly ? [] : options.lean ? LEAN_ATTRIBUTES : undefined
  const fromIndex = reads !== undefined && indexProjects(index, reads)
  // A lean walk still returns the index sort key: `walkMerged` orders shards by it.
  const leanQuery = options.lean === true && fromIndex && options.keysOnly !== true
  if (leanQuery) Object.assign(names, LEAN_PROJECTION.names, { '#isk': `${index}SK` })
  const fetchOptions = options.lean
    ? { ProjectionExpression: LEAN_PROJECTION.ProjectionExpression, ExpressionAttributeNames: LEAN_PROJECTION.names }
    : {}
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: index,
        KeyConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: options.descending !== true,
        ExclusiveStartKey: startKey,
        ...(options.pageSize === undefined ? {} : { Limit: options.pageSize }),
        ...(leanQuery ? { ProjectionExpression: `${LEAN_PROJECTION.ProjectionExpression}, #isk` } : {}),
      }),
    )
    yield fromIndex ? (page.Items ?? []) : await fetchFromTable(page.Items ?? [], fetchOptions)
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
}

/**
 * Walks several index partitions whose sort keys share one order (`<started_at>#<id>`) as one stream in that order
 * (or its reverse with `descending`): a k-way merge that reads each partition page by page, so a limited walk stops
 * early across shards too.
 */
export async function* walkMerged(
  index: string,
  pks: readonly string[],
  options: IndexWalkOptions = {},
): AsyncGenerator<Record<string, unknown>[]> {
  if (pks.length === 1) {
    yield* walkIndex(index, pks[0] as string, options)
    return
  }
  const sk = `${index}SK`
  const walkers = pks.map((pk) => walkIndex(index, pk, options))
  const buffers: Record<string, unknown>[][] = pks.map(() => [])
  const positions = pks.map(() => 0)
  const done = pks.map(() => false)
  const fill = async (i: number) => {
    while (!done[i] && positions[i] === buffers[i]?.length) {
      const next = await walkers[i]?.next()
      if (next === undefined || next.done) done[i] = true
      else {
        buffers[i] = next.value
        positions[i] = 0
      }
    }
  }
  const chunk = options.pageSize ?? 100
  let out: Record<string, unknown>[] = []
  for (;;) {
    await Promise.all(pks.map((_, i) => fill(i)))
    let best = -1
    let bestKey = ''
    for (let i = 0; i < pks.length; i++) {
      const head = buffers[i]?.[positions[i] as number]
      if (head === undefined) continue
      const key = String(head[sk])
      if (best < 0 || (options.descending === true ? key > bestKey : key < bestKey)) {
        best = i
        bestKey = key
      }
    }
    if (best < 0) break
    out.push(buffers[best]?.[positions[best] as number] as Record<string, unknown>)
    positions[best] = (positions[best] as number) + 1
    if (out.length >= chunk) {
      yield out
      out = []
    }
  }
  if (out.length > 0) yield out
}
