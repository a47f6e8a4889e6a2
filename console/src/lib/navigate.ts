// The browser side of keeping a page's state in its route's query (view-query.ts has the pure side): reading the view
// once per query, and moving to a new one.
import { useMemo } from 'preact/hooks'

/** The event `showRoute` fires on `window` once the address holds the new route (`main.tsx` reads the route on it). */
export const ROUTE_SHOWN = 'loom:route-shown'

/**
 * Navigates to a route. `push` adds a history entry, for a user's new choice (a filter applied, a picker changed), so
 * Back returns to the previous one; `replace` swaps the current entry (paging, sorting), so Back leaves the page
 * instead of stepping back through it. The route already shown is left alone.
 */
export function showRoute(hash: string, entry: 'push' | 'replace'): void {
  if (hash === location.hash) return
  if (entry === 'push') location.hash = hash
  else location.replace(hash)
  // The browser's hashchange comes in a task of its own, which input already queued may overtake: the page renders the
  // new route now, so a second pick made before then (another picker, a page) builds on this one, not on the old route.
  dispatchEvent(new Event(ROUTE_SHOWN))
}

/** A page's view parsed from its route's query: the same object while the query is the same, so effects can depend on it. */
export function useRouteView<V>(params: URLSearchParams, parse: (params: URLSearchParams) => V): V {
  const query = params.toString()
  return useMemo(() => parse(params), [query])
}
