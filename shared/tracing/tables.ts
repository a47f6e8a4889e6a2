import { assertProjectAccess } from '#shared/auth/authenticate'
import { registerProject } from '#shared/db/project-repository'
import {
  findRows,
  getTableHeader,
  getTableHeaders,
  listTableRows,
  type NewRow,
  putTable,
  readTableRows,
  type StoredRow,
  type TableRow,
  tableExists,
} from '#shared/db/table-repository'
import { BadRequestError, ConflictError, NotFoundError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type {
  TableCreateFromDigestsReq,
  TableCreateReq,
  TableQueryReq,
  TableQueryStatsBatchReq,
  TableQueryStatsReq,
  TableUpdateReq,
} from '#shared/schemas/table'
import type { TableStatsRow, TableUpdateRes } from '#shared/schemas/table-response'
import { pythonDumpsInOrder, tableDigest, valDigest } from '#shared/tracing/digest'
import { exactPart, isJsonObject, jsonExact, parseStoredJson } from '#shared/tracing/json-exact'
import { assertTableSortFields, sortTableRows } from '#shared/tracing/table-sort'

const isObject = isJsonObject

/**
 * The JSON text a table row is stored as, the one place that writes it (`table/create`, `update`,
 * `create_from_digests`): its numbers as sent (`1.0`, every digit of an integer beyond 2^53, json-exact.ts), and
 * whether it holds such numbers, so that only those rows are read with the exact parser.
 */
export function rowJson(row: unknown): { json: string; exact: boolean } {
  const { text, exact } = jsonExact(row)
  return { json: text, exact }
}

// A new row (parsed exactly from the request, see json-exact.ts): its digest, stored text and Weave's `size_bytes`,
// `length(val_dump)` of `json.dumps(row)`, which is ASCII (`ensure_ascii`), so characters are bytes.
function newRow(row: unknown): NewRow {
  return { digest: valDigest(row), ...rowJson(row), sizeBytes: pythonDumpsInOrder(row).length }
}

// Rows stored before their size was kept: the size of the stored value.
const sizeOf = (row: StoredRow) => row.sizeBytes ?? pythonDumpsInOrder(parseStoredJson(row.json, row.exact)).length
const known = (row: StoredRow): NewRow => ({ ...row, sizeBytes: sizeOf(row) })

// `validate_expected_digest` (DigestMismatchError, 409), with the reference's text.
function assertExpectedDigest(expected: string | null | undefined, digest: string, rows: number): void {
  if (expected != null && expected !== digest) {
    throw new ConflictError(`Client table (${rows} rows) digest ${expected} != server digest ${digest}`)
  }
}

const tableNotFound = (project: string, digest: string) => new NotFoundError(`Table ${project}:${digest} not found`)

/** `table/create`: stores the rows (content-addressed, idempotent) and returns the table and row digests. */
export async function createTable(principal: Principal, req: TableCreateReq, rawBody?: string) {
  const t = req.table
  // The project sits inside `table`, out of reach of the validator's top-level project check.
  assertProjectAccess(principal, t.project_id)
  const exact = exactPart(rawBody, ['table', 'rows'])
  const source = Array.isArray(exact) && exact.length === t.rows.length ? exact : t.rows
  if (!source.every(isObject)) throw new BadRequestError('All rows must be dictionaries')
  const rows = source.map(newRow)
  const rowDigests = rows.map((r) => r.digest)
  const digest = tableDigest(rowDigests)
  assertExpectedDigest(t.expected_digest, digest, rows.length)
  await registerProject(t.project_id)
  await putTable(t.project_id, digest, rows)
  return { digest, row_digests: rowDigests }
}

/** `table/query`: rows in insertion order (or sorted by dot paths into row values), filtered by digest, paged. */
export async function queryTable(req: TableQueryReq): Promise<{ rows: TableRow[] }> {
  const start = req.offset ?? 0
  const filter = req.filter?.row_digests
  const sorts = req.sort_by ?? []
  assertTableSortFields(sorts)
  // Plain paging reads only the requested slice of the row keys.
  if ((filter == null || filter.length === 0) && sorts.length === 0) {
    if (req.limit === 0) return { rows: [] }
    const to = req.limit == null ? undefined : start + req.limit - 1
    return { rows: await listTableRows(req.project_id, req.digest, start, to, true) }
  }
  let rows = await listTableRows(req.project_id, req.digest, undefined, undefined, true)
  if (filter != null && filter.length > 0) rows = rows.filter((r) => filter.includes(r.digest))
  if (sorts.length > 0) rows = sortTableRows(rows, sorts)
  return { rows: rows.slice(start, req.limit == null ? undefined : start + req.limit) }
}

// The row an append or insert carries, as parsed exactly from the raw body when it is there.
function updateRow(exact: unknown, op: 'append' | 'insert', parsed: Record<string, unknown>): NewRow {
  const spec = isObject(exact) ? (exact as Record<string, unknown>)[op] : undefined
  const row = isObject(spec) ? (spec as Record<string, unknown>).row : undefined
  return newRow(isObject(row) ? row : parsed)
}

/**
 * `table/update`: applies appends, pops and inserts in order to the rows of `base_digest` and stores the result as a
 * new table (Weave's `table_update`): 404 for an unknown base table, 400 `Index out of range` before anything is
 * written. Answers the new digest and, per update, the row digest appended, popped or inserted.
 */
export async function updateTable(req: TableUpdateReq, rawBody?: string): Promise<TableUpdateRes> {
  const base = await readTableRows(req.project_id, req.base_digest)
  if (base === undefined) throw tableNotFound(req.project_id, req.base_digest)
  const exact = exactPart(rawBody, ['updates'])
  const exactUpdates = Array.isArray(exact) && exact.length === req.updates.length ? exact : []
  const rows: NewRow[] = base.map(known)
  const updated: string[] = []
  for (const [i, update] of req.updates.entries()) {
    if ('append' in update) {
      const row = updateRow(exactUpdates[i], 'append', update.append.row)
      rows.push(row)
      updated.push(row.digest)
    } else if ('pop' in update) {
      const index = update.pop.index
      if (index < 0 || index >= rows.length) throw new BadRequestError('Index out of range')
      updated.push((rows.splice(index, 1)[0] as NewRow).digest)
    } else {
      const index = update.insert.index
      if (index < 0 || index > rows.length) throw new BadRequestError('Index out of range')
      const row = updateRow(exactUpdates[i], 'insert', update.insert.row)
      rows.splice(index, 0, row)
      updated.push(row.digest)
    }
  }
  const digest = tableDigest(rows.map((r) => r.digest))
  // The same updates again (a retry) name a table that is already complete.
  if (!(await tableExists(req.project_id, digest))) {
    await registerProject(req.project_id)
    await putTable(req.project_id, digest, rows)
  }
  return { digest, updated_row_digests: updated }
}

// At most this many missing digests are named in the 404.
const MISSING_SHOWN = 10

/**
 * `table/create_from_digests`: a table of rows already stored in the project, in the order given. Weave only records
 * the digests; Loom copies the rows into the new table, so every row must be found in the project (404 naming the
 * missing ones otherwise), after the `expected_digest` check (409).
 */
export async function createTableFromDigests(req: TableCreateFromDigestsReq): Promise<{ digest: string }> {
  const digest = tableDigest(req.row_digests)
  assertExpectedDigest(req.expected_digest, digest, req.row_digests.length)
  if (await tableExists(req.project_id, digest)) return { digest }
  const found = await findRows(req.project_id, req.row_digests)
  const missing = [...new Set(req.row_digests.filter((d) => !found.has(d)))]
  if (missing.length > 0) {
    const more = missing.length > MISSING_SHOWN ? ` and ${missing.length - MISSING_SHOWN} more` : ''
    throw new NotFoundError(`Table rows not found: ${missing.slice(0, MISSING_SHOWN).join(', ')}${more}`)
  }
  await registerProject(req.project_id)
  await putTable(
    req.project_id,
    digest,
    req.row_digests.map((d) => known(found.get(d) as StoredRow)),
  )
  return { digest }
}

/** `table/query_stats`: the row count of a complete table; 404 for an unknown one (the reference fails with a 500). */
export async function queryTableStats(req: TableQueryStatsReq): Promise<{ count: number }> {
  const header = await getTableHeader(req.project_id, req.digest)
  if (header === undefined) throw tableNotFound(req.project_id, req.digest)
  return { count: header.rowCount }
}

/**
 * `table/query_stats_batch`: count (and with `include_storage_size` the summed `size_bytes` of the rows, repeats
 * included) of each known table among `digests`, in the order asked, each once; unknown digests are left out.
 */
export async function queryTableStatsBatch(req: TableQueryStatsBatchReq): Promise<{ tables: TableStatsRow[] }> {
  const digests = [...new Set(req.digests ?? [])]
  const headers = await getTableHeaders(req.project_id, digests)
  const tables: TableStatsRow[] = []
  for (const digest of digests) {
    const header = headers.get(digest)
    if (header === undefined) continue
    let size: number | null = null
    if (req.include_storage_size === true) {
      size = header.sizeBytes ?? (await readTableRows(req.project_id, digest))?.reduce((n, r) => n + sizeOf(r), 0) ?? 0
    }
    tables.push({ count: header.rowCount, digest, storage_size_bytes: size })
  }
  return { tables }
}
