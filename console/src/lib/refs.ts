// Weave refs as the console reads them: `weave:///<entity>/<project>/<kind>/<rest>`, e.g. a feedback's call
// (`…/call/<call id>`) or a Dataset's rows (`…/table/<digest>`). Anything else is not a ref the console follows and is
// shown as text.

/** A ref's parts: the project (`<entity>/<project>`), its kind (`call`, `table`, `object`, `op`…) and the rest. */
export type WeaveRef = { project: string; kind: string; rest: string }

const REF = /^weave:\/\/\/([^/]+)\/([^/]+)\/([^/]+)\/(.+)$/

/**
 * The parts of a Weave ref, or undefined for any other string.
 * @example parseWeaveRef('weave:///acme/bot/call/c1') // { project: 'acme/bot', kind: 'call', rest: 'c1' }
 */
export function parseWeaveRef(ref: string): WeaveRef | undefined {
  const m = REF.exec(ref)
  if (m === null) return undefined
  const [, entity = '', name = '', kind = '', rest = ''] = m
  return { project: `${entity}/${name}`, kind, rest }
}

/** The project and id of a call ref (`weave:///<entity>/<project>/call/<id>`), or undefined for any other ref. */
export function callRef(ref: string | null | undefined): { project: string; callId: string } | undefined {
  const parsed = ref == null ? undefined : parseWeaveRef(ref)
  if (parsed?.kind !== 'call' || parsed.rest.includes('/')) return undefined
  return { project: parsed.project, callId: parsed.rest }
}

/** The project and digest of a table ref (`weave:///<entity>/<project>/table/<digest>`), or undefined. */
export function tableRef(value: unknown): { project: string; digest: string } | undefined {
  const parsed = typeof value === 'string' ? parseWeaveRef(value) : undefined
  if (parsed?.kind !== 'table' || parsed.rest.includes('/')) return undefined
  return { project: parsed.project, digest: parsed.rest }
}

/**
 * The table refs at the top level of an object's value, by key, in the value's key order: a Weave Dataset's `rows`,
 * any other field that holds a table. A value that is itself a table ref counts under the key `''`.
 */
export function tableRefsOf(value: unknown): { key: string; project: string; digest: string }[] {
  const own = tableRef(value)
  if (own !== undefined) return [{ key: '', ...own }]
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return []
  return Object.entries(value).flatMap(([key, v]) => {
    const ref = tableRef(v)
    return ref === undefined ? [] : [{ key, ...ref }]
  })
}
