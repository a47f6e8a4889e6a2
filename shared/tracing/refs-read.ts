import { assertProjectAccess } from '#shared/auth/authenticate'
import { getObjVersions } from '#shared/db/obj-repository'
import { findRows, getTableHeaders, readTableRows, type StoredRow } from '#shared/db/table-repository'
import { BadRequestError, NotFoundError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type { RefsReadBatchReq } from '#shared/schemas/ref'
import { pyRepr } from '#shared/tracing/digest'
import { isJsonObject, parseStoredJson } from '#shared/tracing/json-exact'
import { recordVal } from '#shared/tracing/objects-resolve'
import { parsePythonInt } from '#shared/tracing/py-number'

/**
 * `refs/read_batch` (docs/tracing.md, `refs/read_batch`), as Weave's ClickHouse server answers it (`refs_read_batch`,
 * `_refs_read_batch_within_project`; refs parsed as `refs_internal.parse_internal_uri` parses them): each object or op
 * ref is read by its content digest and walked along its extra path (`key`, `attr`, `index`, and `id` through a table
 * ref met on the way), reading the refs met along the path in rounds, each round's reads batched.
 */

/** At most this many refs per request: Weave's bound (`ValueError("Too many refs")`). */
export const MAX_REFS = 1000

// A chain of refs through refs is finite (digests are content hashes), but each link is a round of reads: bounded.
const MAX_ROUNDS = 64

const PREFIX = 'weave:///'
const EDGES = ['key', 'index', 'attr', 'id']

/** A ref as Weave parses one: an object or op version with its extra path, a table, or a call. */
export type ParsedRef =
  | { kind: 'object'; project: string; name: string; digest: string; extra: string[] }
  | { kind: 'table'; project: string; digest: string }
  | { kind: 'call'; project: string; id: string }

const invalid = (message: string) => new BadRequestError(message)
const pyList = (items: readonly string[]) => `[${items.map(pyRepr).join(', ')}]`

// Python's `urllib.parse.unquote`: each run of ASCII characters has its `%XX` escapes turned into bytes and is decoded
// as UTF-8 (invalid bytes become U+FFFD); a `%` without two hex digits stays as it is.
function pyUnquote(text: string): string {
  if (!text.includes('%')) return text
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, as Python's `_asciire`.
  return text.replace(/[\u0000-\u007f]+/g, (run) => {
    if (!run.includes('%')) return run
    const bytes: number[] = []
    for (let i = 0; i < run.length; i++) {
      const hex = run.slice(i + 1, i + 3)
      if (run[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
        bytes.push(Number.parseInt(hex, 16))
        i += 2
      } else bytes.push(run.charCodeAt(i))
    }
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(bytes))
  })
}

// `refs_internal.validate_extra`: edge name / value pairs, known edge names, `int()`-able list indexes.
function validateExtra(extra: readonly string[]): void {
  if (extra.length % 2 !== 0) throw invalid('Extra fields must be key-value pairs.')
  for (let i = 0; i < extra.length; i += 2) {
    if (!EDGES.includes(extra[i] as string)) throw invalid(`Invalid extra edge name at index ${i}: ${pyList(extra)}`)
    if (extra[i] === 'index' && parsePythonInt(extra[i + 1] as string) === undefined) {
      throw invalid(`Invalid list edge value at index ${i + 1}: ${pyList(extra)}`)
    }
  }
}

/**
 * Parses a `weave:///<entity>/<project>/<kind>/…` ref as Weave does (400 otherwise): `object/<name>:<digest>` and
 * `op/<name>:<digest>` with an optional extra path (percent-decoded; a trailing `/` is no path), `table/<digest>` and
 * `call/<id>` (anything after them ignored). Where Weave fails with a server error (no part after the kind), a 400.
 */
export function parseRef(uri: string): ParsedRef {
  if (!uri.startsWith(PREFIX)) throw invalid(`Invalid URI: ${uri}. Must start with ${PREFIX}`)
  const parts = uri.slice(PREFIX.length).split('/')
  if (parts.length < 3) throw invalid(`Invalid URI: ${uri}`)
  const [entity, projectName, kind, ...remaining] = parts as [string, string, string, ...string[]]
  const project = `${entity}/${projectName}`
  const first = remaining[0]
  if (!['table', 'object', 'op', 'call'].includes(kind)) throw invalid(`Unknown ref kind: ${kind}`)
  if (first === undefined) throw invalid(`Invalid URI: ${uri}. Nothing follows the ref kind '${kind}'`)
  if (kind === 'table') return { kind: 'table', project, digest: first }
  if (kind === 'call') return { kind: 'call', project, id: first }
  const nameVersion = first.split(':')
  if (nameVersion.length !== 2) throw invalid(`Invalid URI: ${uri}. Expected <name>:<version> after '${kind}/'`)
  const rest = remaining.slice(1)
  const extra = rest.length === 1 && rest[0] === '' ? [] : rest.map(pyUnquote)
  validateExtra(extra)
  return { kind: 'object', project, name: nameVersion[0] as string, digest: nameVersion[1] as string, extra }
}

/** What a ref still needs read before its walk goes on along `path`. */
type Read =
  | { kind: 'object'; project: string; name: string; digest: string; path: string[] }
  | { kind: 'row'; project: string; table: string; row: string; path: string[] }

/** A ref's resolution: its value, or the read it waits for (`scope`: the only project it may read). */
type State = { scope: string; done: true; val: unknown } | { scope: string; done: false; read: Read }

const objKey = (r: { project: string; name: string; digest: string }) => `${r.project}\u0000${r.name}\u0000${r.digest}`
const rowKey = (r: { project: string; table: string; row: string }) => `${r.project}\u0000${r.table}\u0000${r.row}`

// JSON objects only: arrays and the exact-number wrappers (`PyFloat`, `PyInt`) are not walked into by key.
const isDict = isJsonObject

// A ref stored in a value, or undefined for any other string. Weave refuses a malformed `weave:///` string when the
// object is created and fails the read on one it stored (400); Loom stores values as sent and walks one as a string.
function storedRef(text: string): ParsedRef | undefined {
  if (!text.startsWith(PREFIX)) return undefined
  try {
    return parseRef(text)
  } catch {
    return undefined
  }
}

/**
 * Walks `extra` from `val` (`resolve_extra`): a ref met before an edge is read first (an object or op ref: its own
 * extra, then the rest of this path; a table ref: the row the `id` edge names, 400 `Table refs must have id extra`
 * for another edge); a ref into another project, a missing key or index, or a value of the wrong kind gives null.
 */
function walk(scope: string, start: unknown, extra: readonly string[]): State {
  let val = start
  for (let i = 0; i < extra.length; i += 2) {
    const edge = extra[i] as string
    const arg = extra[i + 1] as string
    const ref = typeof val === 'string' ? storedRef(val) : undefined
    if (ref !== undefined) {
      if (ref.project !== scope) return { scope, done: true, val: null }
      if (ref.kind === 'object') {
        const read: Read = { ...ref, path: [...ref.extra, ...extra.slice(i)] }
        return { scope, done: false, read }
      }
      if (ref.kind === 'table') {
        if (edge !== 'id') throw invalid('Table refs must have id extra')
        const read: Read = { kind: 'row', project: ref.project, table: ref.digest, row: arg, path: extra.slice(i + 2) }
        return { scope, done: false, read }
      }
      // A call ref is walked as the string it is, as Weave does.
    }
    if (val === null || val === undefined) return { scope, done: true, val: null }
    if (edge === 'key' || edge === 'attr') {
      val = isDict(val) && Object.hasOwn(val, arg) ? val[arg] : null
    } else if (edge === 'index') {
      // Python's indexing of a list or a string (its code points), negative indexes from the end.
      const items = Array.isArray(val) ? val : typeof val === 'string' ? [...val] : undefined
      const n = parsePythonInt(arg) as number
      if (items === undefined || n >= items.length || n < -items.length) return { scope, done: true, val: null }
      val = items[n < 0 ? items.length + n : n]
    } else {
      // `id` on a value that is no table ref.
      throw invalid(`Unknown ref type: ${edge}`)
    }
  }
  return { scope, done: true, val: val === undefined ? null : val }
}

// Reads the object versions the reads wait for into `cache` (each version not read yet once, in consistent
// `BatchGetItem`s of 100), a deleted one as null: 400 for `latest`, and Weave's 404 when fewer distinct
// digests are found than asked for (a deleted version counts as found).
async function readObjects(reads: Read[], cache: Map<string, unknown>): Promise<void> {
  const wanted = new Map<string, Extract<Read, { kind: 'object' }>>()
  for (const r of reads) {
    if (r.kind !== 'object') continue
    if (r.digest === 'latest') throw invalid('Reading refs with `latest` is not supported')
    if (!cache.has(objKey(r))) wanted.set(objKey(r), r)
  }
  const list = [...wanted.values()]
  const records = await getObjVersions(
    list.map((r) => ({ project: r.project, objectId: r.name, digest: r.digest })),
    true,
  )
  const asked = [...new Set(list.map((r) => r.digest))]
  const found = new Set<string>()
  list.forEach((r, i) => {
    const record = records[i]
    // A version without an index is a create still under way (or one that failed part-way): not there yet.
    if (record === undefined || record.version.version_index === undefined) return
    found.add(r.digest)
    cache.set(objKey(r), record.version.deleted_at ? null : recordVal(record))
  })
  if (found.size !== asked.length) {
    const diff = asked.filter((d) => !found.has(d))
    throw new NotFoundError(
      `Ref read contains ${asked.length} digests, but found ${found.size} objects. Diff digests: {${diff.map(pyRepr).join(', ')}}`,
    )
  }
  for (const r of list) if (!cache.has(objKey(r))) cache.set(objKey(r), null)
}

// Reads the table rows the reads wait for into `cache`, per project: the tables' headers (a table is visible once complete), the
// rows through their pointers, and a complete table's own rows for any a pointer does not find (rows stored before
// pointers were kept). A row not found is Weave's 404 `Row digest <d> not found`.
async function readRows(reads: Read[], cache: Map<string, unknown>): Promise<void> {
  const rows = reads.filter((r): r is Extract<Read, { kind: 'row' }> => r.kind === 'row' && !cache.has(rowKey(r)))
  for (const project of new Set(rows.map((r) => r.project))) {
    const mine = rows.filter((r) => r.project === project)
    const headers = await getTableHeaders(project, [...new Set(mine.map((r) => r.table))])
    const complete = mine.filter((r) => headers.has(r.table))
    const byPointer =
      complete.length === 0 ? new Map() : await findRows(project, [...new Set(complete.map((r) => r.row))])
    const scanned = new Map<string, Map<string, StoredRow>>()
    for (const r of complete) {
      let row = byPointer.get(r.row)
      if (row === undefined) {
        let table = scanned.get(r.table)
        if (table === undefined) {
          const stored = (await readTableRows(project, r.table)) ?? []
          table = new Map(stored.map((s) => [s.digest, s]))
          scanned.set(r.table, table)
        }
        row = table.get(r.row)
      }
      if (row !== undefined) cache.set(rowKey(r), parseStoredJson(row.json, row.exact))
    }
    const missing = mine.find((r) => !cache.has(rowKey(r)))
    if (missing !== undefined) throw new NotFoundError(`Row digest ${missing.row} not found`)
  }
}

// Resolves parsed object refs: each value in order, null for a deleted version or a path that finds nothing.
async function resolveRefs(refs: readonly Extract<ParsedRef, { kind: 'object' }>[]): Promise<unknown[]> {
  let states: State[] = refs.map((ref) => ({ scope: ref.project, done: false, read: { ...ref, path: ref.extra } }))
  const objects = new Map<string, unknown>()
  const rows = new Map<string, unknown>()
  for (let round = 0; states.some((s) => !s.done); round++) {
    if (round >= MAX_ROUNDS) throw invalid(`Refs nest more than ${MAX_ROUNDS} deep`)
    const reads = states.flatMap((s) => (s.done ? [] : [s.read]))
    await readObjects(reads, objects)
    await readRows(reads, rows)
    states = states.map((s) => {
      if (s.done) return s
      const r = s.read
      const val = r.kind === 'object' ? objects.get(objKey(r)) : rows.get(rowKey(r))
      return walk(s.scope, val, r.path)
    })
  }
  return states.map((s) => (s.done ? s.val : null))
}

/**
 * `refs/read_batch`: at most 1,000 refs (400 `Too many refs`), each parsed (400), each project the caller's (403, or
 * 400 for a malformed project, as `assertProjectAccess`), no bare table or call refs (400), then resolved in order.
 */
export async function readRefsBatch(principal: Principal, req: RefsReadBatchReq): Promise<{ vals: unknown[] }> {
  if (req.refs.length > MAX_REFS) throw invalid('Too many refs')
  const parsed = req.refs.map(parseRef)
  for (const project of new Set(parsed.map((r) => r.project))) assertProjectAccess(principal, project)
  if (parsed.some((r) => r.kind === 'table')) throw invalid('Table refs not supported')
  if (parsed.some((r) => r.kind === 'call'))
    throw invalid('Call refs not supported in batch read, use calls_query_stream')
  const objects = parsed.filter((r): r is Extract<ParsedRef, { kind: 'object' }> => r.kind === 'object')
  return { vals: await resolveRefs(objects) }
}
