import { listTableRows } from '#shared/db/table-repository'
import { isJsonObject, parseStoredJson } from '#shared/tracing/json-exact'
import { resolveObjVersion } from '#shared/tracing/objects-resolve'

/**
 * `expand_columns` (docs/tracing.md §7.4): refs found at the listed paths of a call are replaced by the referenced
 * value; an object value gets an added `_ref` key holding the ref URI. Paths are expanded shallowest first, so
 * `inputs.model.prompt` reads a ref inside the object `inputs.model` pointed to. Only refs into the queried project
 * are read. Op refs are object refs (Weave's `InternalOpRef` is an `InternalObjectRef`, which its `_get_refs_to_resolve`
 * keeps) and expand to the op's value; a ref that does not resolve (unknown, deleted, another project, a bare table
 * ref, a call ref) stays as it is.
 */

/** Reads a ref URI's value, or undefined when it does not resolve; one per request, caching each URI. */
export type RefReader = (uri: string) => Promise<unknown>

const REF_RE = /^weave:\/\/\/([^/]+\/[^/]+)\/(object|op|table)\/([^:/]+)(?::([^/]+))?((?:\/[^/]+\/[^/]+)*)$/

// The exact-number wrappers are numbers, not objects to walk into or to add `_ref` to.
const isObj = isJsonObject
const isRef = (v: unknown): v is string => typeof v === 'string' && v.startsWith('weave:///')

/**
 * A reader of object refs into `project`, through the objects repository. Extra ref parts walk into the value:
 * `/key/<k>` and `/attr/<a>` into objects, `/index/<n>` into lists, `/id/<row digest>` into a table's rows (the refs
 * the SDK's evaluations write for dataset rows); a ref met along the way is read first. A table's rows are read once
 * per request; a table whose create stopped part-way (no header) has none, so its row refs stay unexpanded.
 * `exactNumbers` reads object values with their numbers as stored (`PyFloat`, `PyInt`), for an answer written with
 * `stringifyJsonExact`; without it they are plain numbers, as the query evaluation needs.
 */
export function objectRefReader(project: string, options: { exactNumbers?: boolean } = {}): RefReader {
  const cache = new Map<string, Promise<unknown>>()
  const tables = new Map<string, Promise<Map<string, unknown>>>()
  const rowsOf = (digest: string) => {
    let rows = tables.get(digest)
    if (rows === undefined) {
      const exact = options.exactNumbers === true
      rows = listTableRows(project, digest, undefined, undefined, exact).then(
        (list) => new Map(list.map((r) => [r.digest, r.val])),
      )
      tables.set(digest, rows)
    }
    return rows
  }
  const walk = async (start: unknown, extra: string): Promise<unknown> => {
    const parts = extra.split('/').slice(1)
    let cur = start
    for (let i = 0; i < parts.length; i += 2) {
      const kind = parts[i]
      const arg = decodeURIComponent(parts[i + 1] as string)
      if (kind === 'id') {
        const m = isRef(cur) ? REF_RE.exec(cur) : null
        if (m === null || m[1] !== project || m[2] !== 'table' || m[5] !== '') return undefined
        cur = (await rowsOf(m[3] as string)).get(arg)
        if (cur === undefined) return undefined
        continue
      }
      if (isRef(cur)) cur = await read(cur)
      if ((kind === 'key' || kind === 'attr') && isObj(cur) && arg in cur) cur = cur[arg]
      else if (kind === 'index' && Array.isArray(cur) && /^\d+$/.test(arg) && Number(arg) < cur.length) {
        cur = cur[Number(arg)]
      } else return undefined
    }
    return cur
  }
  const load = async (uri: string): Promise<unknown> => {
    const m = REF_RE.exec(uri)
    if (m === null || m[1] !== project) return undefined
    const extra = m[5] as string
    // A bare table ref is not expanded; a table ref with a row id is walked from the bare table ref.
    if (m[2] === 'table') return extra === '' ? undefined : walk(uri.slice(0, uri.length - extra.length), extra)
    if (m[4] === undefined) return undefined
    const record = await resolveObjVersion(project, m[3] as string, m[4], true)
    if (record === undefined || record.version.deleted_at || record.valText === undefined) return undefined
    const exact = options.exactNumbers === true && record.version.val_exact === true
    return walk(parseStoredJson(record.valText, exact), extra)
  }
  const read: RefReader = (uri) => {
    let found = cache.get(uri)
    if (found === undefined) {
      found = load(uri)
      cache.set(uri, found)
    }
    return found
  }
  return read
}

function getPath(root: unknown, parts: readonly string[]): unknown {
  let cur = root
  for (const part of parts) {
    if (Array.isArray(cur) && /^\d+$/.test(part)) cur = cur[Number(part)]
    else if (isObj(cur)) cur = cur[part]
    else return undefined
  }
  return cur
}

// Copies the containers along the path, so values shared with other calls (or the loaded call) are never mutated.
function setPath(root: unknown, parts: readonly string[], value: unknown): unknown {
  if (parts.length === 0) return value
  const [head, ...rest] = parts as [string, ...string[]]
  if (Array.isArray(root) && /^\d+$/.test(head)) {
    const copy = [...root]
    copy[Number(head)] = setPath(root[Number(head)], rest, value)
    return copy
  }
  if (isObj(root)) return { ...root, [head]: setPath(root[head], rest, value) }
  return root
}

/** The records with the refs at `columns` expanded (new objects where something changed; inputs untouched). */
export async function expandRefs<T extends object>(
  records: readonly T[],
  columns: readonly string[],
  read: RefReader,
): Promise<T[]> {
  let out = [...records]
  const paths = [...new Set(columns)].map((c) => c.split('.')).sort((a, b) => a.length - b.length)
  for (const parts of paths) {
    const refs = out.map((r) => getPath(r, parts))
    const values = await Promise.all(
      refs.map((ref) => (typeof ref === 'string' && ref.startsWith('weave:///') ? read(ref) : undefined)),
    )
    out = out.map((r, i) => {
      const v = values[i]
      if (v === undefined) return r
      return setPath(r, parts, isObj(v) ? { ...v, _ref: refs[i] } : v) as T
    })
  }
  return out
}

/** Whether a query or sort path reads through one of the expanded columns. */
export function readsThroughExpansion(paths: readonly string[], columns: readonly string[]): boolean {
  return paths.some((p) => columns.some((c) => p === c || p.startsWith(`${c}.`)))
}
