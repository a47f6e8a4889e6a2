import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb'
import { putAll } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { keyPart } from '#shared/db/key-part'
import { loadJson, type StoredJson, storeJson } from '#shared/db/large-value'
import { queryAll } from '#shared/db/query'

// Tables (docs/data-model.md): one partition per (project, table digest): PK=TABLE#<project>#<digest>
//   SK=ROW#<index, 9 digits>  one row: its digest and value (large rows as chunks under SK=VAL#<index>#LV#…)
//   SK=TABLE                  written last, so its presence means every row is stored; holds the row count
// Content addressing makes every write idempotent: a retried or concurrent create rewrites identical items.

const INLINE_BYTES = 300_000
const tablePk = (project: string, digest: string) => `TABLE#${keyPart(project)}#${keyPart(digest)}`
const pad = (n: number) => String(n).padStart(9, '0')

/** One stored row. */
export type TableRow = { digest: string; val: unknown; original_index: number }

async function batchPut(items: Record<string, unknown>[]): Promise<void> {
  await putAll(items, 1)
}

/** Stores a table's rows, then its header (only after every row is stored); safe to repeat, a retry completes it. */
export async function putTable(
  project: string,
  digest: string,
  rows: { digest: string; json: string }[],
): Promise<void> {
  const pk = tablePk(project, digest)
  const items: Record<string, unknown>[] = []
  for (const [i, row] of rows.entries()) {
    const val = await storeJson({ pk, skPrefix: `VAL#${pad(i)}` }, row.json, INLINE_BYTES)
    items.push({ PK: pk, SK: `ROW#${pad(i)}`, row_digest: row.digest, val })
  }
  await batchPut(items)
  await db().send(
    new PutCommand({
      TableName: table(),
      Item: { PK: pk, SK: 'TABLE', project_id: project, digest, row_count: rows.length },
    }),
  )
}

/** Whether a table was stored completely. */
export async function tableExists(project: string, digest: string): Promise<boolean> {
  const { Item } = await db().send(
    new GetCommand({ TableName: table(), Key: { PK: tablePk(project, digest), SK: 'TABLE' }, ConsistentRead: true }),
  )
  return Item !== undefined
}

/**
 * Rows of a complete table in insertion order, optionally only indexes `[from, to]`; none when its header is missing
 * (unknown, or a create that failed part-way: its rows stay invisible until a retry writes the header).
 */
export async function listTableRows(project: string, digest: string, from = 0, to = 999_999_999): Promise<TableRow[]> {
  // Header first, then the rows, both consistent: once the header is seen every row is stored and readable.
  if (!(await tableExists(project, digest))) return []
  const pk = tablePk(project, digest)
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :a AND :b',
    ExpressionAttributeValues: { ':pk': pk, ':a': `ROW#${pad(from)}`, ':b': `ROW#${pad(to)}` },
    ConsistentRead: true,
  })
  return Promise.all(
    items.map(async (item) => {
      const index = Number(String(item.SK).slice(4))
      const text = await loadJson({ pk, skPrefix: `VAL#${pad(index)}` }, item.val as StoredJson)
      return { digest: String(item.row_digest), val: JSON.parse(text), original_index: index }
    }),
  )
}
