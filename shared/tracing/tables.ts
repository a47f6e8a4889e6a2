import { assertProjectAccess } from '#shared/auth/authenticate'
import { registerProject } from '#shared/db/project-repository'
import { listTableRows, putTable, type TableRow } from '#shared/db/table-repository'
import { BadRequestError, ConflictError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type { TableCreateReq, TableQueryReq } from '#shared/schemas/table'
import { tableDigest, valDigest } from '#shared/tracing/digest'
import { exactPart } from '#shared/tracing/json-exact'

const isObject = (v: unknown) =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(v))

/** `table/create`: stores the rows (content-addressed, idempotent) and returns the table and row digests. */
export async function createTable(principal: Principal, req: TableCreateReq, rawBody?: string) {
  const t = req.table
  // The project sits inside `table`, out of reach of the validator's top-level project check.
  assertProjectAccess(principal, t.project_id)
  const exact = exactPart(rawBody, ['table', 'rows'])
  const source = Array.isArray(exact) && exact.length === t.rows.length ? exact : t.rows
  if (!source.every(isObject)) throw new BadRequestError('All rows must be dictionaries')
  const rows = source.map((row) => ({ digest: valDigest(row), json: JSON.stringify(row) }))
  const rowDigests = rows.map((r) => r.digest)
  const digest = tableDigest(rowDigests)
  if (t.expected_digest != null && t.expected_digest !== digest) {
    throw new ConflictError(`Digest mismatch: expected ${t.expected_digest}, got ${digest}`)
  }
  await registerProject(t.project_id)
  await putTable(t.project_id, digest, rows)
  return { digest, row_digests: rowDigests }
}

function at(value: unknown, path: string): unknown {
  let v = value
  for (const part of path.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined
    v = (v as Record<string, unknown>)[part]
  }
  return v
}

function compare(a: unknown, b: unknown): number {
  if (a === undefined || a === null) return b === undefined || b === null ? 0 : 1
  if (b === undefined || b === null) return -1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  const x = typeof a === 'string' ? a : JSON.stringify(a)
  const y = typeof b === 'string' ? b : JSON.stringify(b)
  return x < y ? -1 : x > y ? 1 : 0
}

/** `table/query`: rows in insertion order (or sorted by dot paths into row values), filtered by digest, paged. */
export async function queryTable(req: TableQueryReq): Promise<{ rows: TableRow[] }> {
  const start = req.offset ?? 0
  const filter = req.filter?.row_digests
  const sorts = (req.sort_by ?? []).map((s) => ({ ...s, path: s.field.replace(/^val\./, '') }))
  // Plain paging reads only the requested slice of the row keys.
  if ((filter == null || filter.length === 0) && sorts.length === 0) {
    if (req.limit === 0) return { rows: [] }
    const to = req.limit == null ? undefined : start + req.limit - 1
    return { rows: await listTableRows(req.project_id, req.digest, start, to) }
  }
  let rows = await listTableRows(req.project_id, req.digest)
  if (filter != null && filter.length > 0) rows = rows.filter((r) => filter.includes(r.digest))
  if (sorts.length > 0) {
    rows.sort((a, b) => {
      for (const s of sorts) {
        const c = compare(at(a.val, s.path), at(b.val, s.path))
        if (c !== 0) return s.direction === 'desc' ? -c : c
      }
      return a.original_index - b.original_index
    })
  }
  return { rows: rows.slice(start, req.limit == null ? undefined : start + req.limit) }
}
