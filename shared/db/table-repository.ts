import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb'
import { getAll, putAll } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { keyPart } from '#shared/db/key-part'
import { loadJson, type StoredJson, storeJson } from '#shared/db/large-value'
import { queryAll } from '#shared/db/query'
import { parseStoredJson } from '#shared/tracing/json-exact'

// Tables (docs/data-model.md): one partition per (project, table digest): PK=TABLE#<project>#<digest>
//   SK=ROW#<index, 9 digits>  one row: its digest, size and value (large rows as chunks under SK=VAL#<index>#LV#…)
//   SK=TABLE                  written last, so its presence means every row is stored; holds the row count and size
// Row pointers, one partition per (project, row digest): PK=TROW#<project>#<row digest>, SK=TROW, naming one stored
// copy of the row (table digest, index). Written after the rows and before the header, so a pointer always names a
// stored row; `table/create_from_digests` finds rows through them.
// Content addressing makes every write idempotent: a retried or concurrent write rewrites identical items.

const INLINE_BYTES = 300_000
const MAX_INDEX = 999_999_999
const tablePk = (project: string, digest: string) => `TABLE#${keyPart(project)}#${keyPart(digest)}`
const pointerKey = (project: string, rowDigest: string) => ({
  PK: `TROW#${keyPart(project)}#${keyPart(rowDigest)}`,
  SK: 'TROW',
})
const pad = (n: number) => String(n).padStart(9, '0')
const rowOwner = (pk: string, index: number) => ({ pk, skPrefix: `VAL#${pad(index)}` })

/** One stored row, parsed: what `table/query` answers. */
export type TableRow = { digest: string; val: unknown; original_index: number }

/**
 * A row as stored: its digest, its JSON text, whether that text holds exact numbers (`1.0`, integers beyond 2^53: see
 * json-exact.ts) and Weave's `size_bytes` (unknown for rows stored before it was kept).
 */
export type StoredRow = { digest: string; json: string; exact: boolean; sizeBytes: number | undefined }

/** A row to store: its size is always known. */
export type NewRow = StoredRow & { sizeBytes: number }

/** A complete table's header: row count and total size (unknown for tables stored before it was kept). */
export type TableHeader = { rowCount: number; sizeBytes: number | undefined }

const optionalNumber = (v: unknown) => (typeof v === 'number' ? v : undefined)

/**
 * Stores a table's rows, then a pointer per distinct row, then its header (only after every row is stored); safe to
 * repeat, a retry completes it.
 */
export async function putTable(project: string, digest: string, rows: readonly NewRow[]): Promise<void> {
  const pk = tablePk(project, digest)
  const items: Record<string, unknown>[] = []
  const pointers = new Map<string, Record<string, unknown>>()
  for (const [i, row] of rows.entries()) {
    const val = await storeJson(rowOwner(pk, i), row.json, INLINE_BYTES)
    const item = { PK: pk, SK: `ROW#${pad(i)}`, row_digest: row.digest, size_bytes: row.sizeBytes, val }
    items.push(row.exact ? { ...item, val_exact: true } : item)
    if (!pointers.has(row.digest)) {
      pointers.set(row.digest, { ...pointerKey(project, row.digest), table_digest: digest, index: i })
    }
  }
  await putAll(items, 1)
  await putAll([...pointers.values()], 1)
  const sizeBytes = rows.reduce((n, r) => n + r.sizeBytes, 0)
  await db().send(
    new PutCommand({
      TableName: table(),
      Item: { PK: pk, SK: 'TABLE', project_id: project, digest, row_count: rows.length, size_bytes: sizeBytes },
    }),
  )
}

function toHeader(item: Record<string, unknown>): TableHeader {
  return { rowCount: Number(item.row_count), sizeBytes: optionalNumber(item.size_bytes) }
}

/** The header of a complete table (strongly consistent); undefined when unknown or still being written. */
export async function getTableHeader(project: string, digest: string): Promise<TableHeader | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: table(), Key: { PK: tablePk(project, digest), SK: 'TABLE' }, ConsistentRead: true }),
  )
  return Item === undefined ? undefined : toHeader(Item)
}

/** Headers of several tables by digest (consistent `BatchGetItem`s); unknown digests are absent from the map. */
export async function getTableHeaders(project: string, digests: readonly string[]): Promise<Map<string, TableHeader>> {
  const items = await getAll(digests.map((d) => ({ PK: tablePk(project, d), SK: 'TABLE' })))
  return new Map(items.map((item) => [String(item.digest), toHeader(item)]))
}

/** Whether a table was stored completely. */
export async function tableExists(project: string, digest: string): Promise<boolean> {
  return (await getTableHeader(project, digest)) !== undefined
}

async function toStoredRow(item: Record<string, unknown>): Promise<StoredRow & { index: number }> {
  const pk = String(item.PK)
  const index = Number(String(item.SK).slice(4))
  const json = await loadJson(rowOwner(pk, index), item.val as StoredJson)
  const exact = item.val_exact === true
  return { digest: String(item.row_digest), json, exact, sizeBytes: optionalNumber(item.size_bytes), index }
}

/**
 * Rows of a complete table as stored, in insertion order, optionally only indexes `[from, to]`; undefined when its
 * header is missing (unknown, or a create that failed part-way: its rows stay invisible until a retry writes it).
 */
export async function readTableRows(
  project: string,
  digest: string,
  from = 0,
  to = MAX_INDEX,
): Promise<(StoredRow & { index: number })[] | undefined> {
  // Header first, then the rows, both consistent: once the header is seen every row is stored and readable.
  if (!(await tableExists(project, digest))) return undefined
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :a AND :b',
    ExpressionAttributeValues: { ':pk': tablePk(project, digest), ':a': `ROW#${pad(from)}`, ':b': `ROW#${pad(to)}` },
    ConsistentRead: true,
  })
  return Promise.all(items.map(toStoredRow))
}

/**
 * Rows of a complete table in insertion order, parsed, optionally only indexes `[from, to]`; none when missing.
 * `exactNumbers` reads them with their numbers as stored (`PyFloat`, `PyInt`), for an answer written with
 * `stringifyJsonExact`; without it they are plain numbers.
 */
export async function listTableRows(
  project: string,
  digest: string,
  from = 0,
  to = MAX_INDEX,
  exactNumbers = false,
): Promise<TableRow[]> {
  const rows = (await readTableRows(project, digest, from, to)) ?? []
  return rows.map((r) => ({
    digest: r.digest,
    val: parseStoredJson(r.json, exactNumbers && r.exact),
    original_index: r.index,
  }))
}

/**
 * Finds stored rows of the project by row digest, through their pointers (consistent reads): the map holds each
 * digest found; rows of tables stored before pointers were kept are found once a table holding them is written again.
 */
export async function findRows(project: string, rowDigests: readonly string[]): Promise<Map<string, StoredRow>> {
  const pointers = await getAll([...new Set(rowDigests)].map((d) => pointerKey(project, d)))
  const sources = new Map<string, { PK: string; SK: string }>()
  for (const p of pointers) {
    const key = { PK: tablePk(project, String(p.table_digest)), SK: `ROW#${pad(Number(p.index))}` }
    sources.set(`${key.PK}\u0000${key.SK}`, key)
  }
  const rows = await Promise.all((await getAll([...sources.values()])).map(toStoredRow))
  return new Map(
    rows.map((r) => [r.digest, { digest: r.digest, json: r.json, exact: r.exact, sizeBytes: r.sizeBytes }]),
  )
}
