// Reading and writing a page's state as the query of its route (`#/<entity>/<project>/<page>?<query>`), for the
// Traces page (traces-view.ts) and the others (page-views.ts). A value read from a link is checked against what the
// page can show and falls back to its default, so a stale or hand-edited link never breaks a page; a default is left
// out of the link, so the plain link stays plain.

/**
 * `value` when it is one of `allowed` (compared as text), else `fallback`.
 * @example oneOf('7d', ['24h', '7d'], '24h') // '7d'
 */
export function oneOf<T extends string | number>(value: string | null, allowed: readonly T[], fallback: T): T {
  return allowed.find((a) => String(a) === value) ?? fallback
}

// At most nine digits: any page a person reaches by paging, never a number that loses precision.
const OFFSET = /^\d{1,9}$/

/** A page's first row (`offset=50`): 0 when absent or not a plain count. */
export function offsetParam(value: string | null): number {
  return value !== null && OFFSET.test(value) ? Number(value) : 0
}

/** A comma-separated list (`p=50,95`): undefined when the parameter is absent, empty when its value is. */
export function listParam(value: string | null): string[] | undefined {
  if (value === null) return undefined
  return value === '' ? [] : value.split(',')
}

/**
 * The entries of a list a link names that the page can show, in the link's order, once each; the fallback when the
 * link names none or only unknown ones (an empty list the link names stays empty: nothing chosen).
 */
export function knownOf<T>(named: readonly string[] | undefined, known: readonly T[], fallback: T[]): T[] {
  if (named === undefined) return fallback
  const found = [...new Set(named)].flatMap((n) => known.filter((k) => String(k) === n))
  return named.length > 0 && found.length === 0 ? fallback : found
}

/** `wanted` when the page lists it, else the first listed value (`''` with none): a value the page loads the list of. */
export function listedOr(wanted: string, listed: readonly string[]): string {
  return listed.includes(wanted) ? wanted : (listed[0] ?? '')
}

/**
 * A view's query: each value that differs from its default, by parameter name.
 * @example changedParams({ range: '7d', res: 'hour' }, { range: '24h', res: 'hour' }) // { range: '7d' }
 */
export function changedParams(
  values: Record<string, string>,
  defaults: Record<string, string>,
): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([name, value]) => value !== defaults[name]))
}
