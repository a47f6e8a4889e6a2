// Hash routes (`#/traces`, `#/trace/<trace id>?call=<id>`): the server serves one page, and nothing of the route or the
// key reaches the server or the Referer.

/** The console's pages, in navigation order, with the link names the issue fixes. */
export const PAGES = [
  { id: 'signin', label: 'Sign in' },
  { id: 'traces', label: 'Traces' },
  { id: 'feedback', label: 'Feedback' },
  { id: 'usage', label: 'Usage' },
  { id: 'training', label: 'Training' },
  { id: 'queues', label: 'Queues' },
  { id: 'objects', label: 'Objects' },
  { id: 'api', label: 'API' },
] as const
export type PageId = (typeof PAGES)[number]['id'] | 'trace'

/** A parsed route: the page, its path segments after the page and its query parameters. */
export type Route = { page: PageId; parts: string[]; params: URLSearchParams }

/** Parses `#/<page>/<part>…?<query>`; an unknown or empty hash is the Traces page. */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '')
  const [path = '', query = ''] = raw.split('?', 2)
  const [page = '', ...parts] = path.split('/').map((p) => {
    try {
      return decodeURIComponent(p)
    } catch {
      return p
    }
  })
  const known = page === 'trace' || PAGES.some((p) => p.id === page)
  return { page: known ? (page as PageId) : 'traces', parts, params: new URLSearchParams(query) }
}

/** The hash of a route: each part encoded, params appended. */
export function routeHash(page: PageId, parts: string[] = [], params?: Record<string, string>): string {
  const path = [page, ...parts].map(encodeURIComponent).join('/')
  const query = params === undefined ? '' : new URLSearchParams(params).toString()
  return `#/${path}${query === '' ? '' : `?${query}`}`
}
