// Hash routes (`#/<entity>/<project>/traces`, `#/<entity>/<project>/trace/<trace id>?call=<id>`, `#/signin`): the
// server serves one page, and nothing of the route or the key reaches the server or the Referer. A project's pages
// carry the project, so a link opened in a new tab or by someone else shows the same project; the older form without
// it (`#/trace/<trace id>`) still opens, in the session's project.

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

/** A parsed route: the page, its path segments after the page, its query parameters and the project it names. */
export type Route = { page: PageId; parts: string[]; params: URLSearchParams; project: string | undefined }

const isPage = (id: string): id is PageId => id === 'trace' || PAGES.some((p) => p.id === id)

/** Whether a page shows one project's data, so its links name the project (Sign in and API do not). */
export function projectPage(page: PageId): boolean {
  return page !== 'signin' && page !== 'api'
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/**
 * Parses `#/<entity>/<project>/<page>/<part>…?<query>`, or the older `#/<page>/<part>…?<query>` (project undefined);
 * an unknown or empty hash is the Traces page. A route has the project form when its third segment is a page: the
 * older form never had more than one part after the page, and never a page name there.
 */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '')
  const cut = raw.indexOf('?')
  const path = cut < 0 ? raw : raw.slice(0, cut)
  const query = cut < 0 ? '' : raw.slice(cut + 1)
  let segments = path.split('/').map(decode)
  let project: string | undefined
  const [entity = '', name = '', third = ''] = segments
  if (segments.length >= 3 && isPage(third) && entity !== '' && name !== '') {
    project = `${entity}/${name}`
    segments = segments.slice(2)
  }
  const [page = '', ...parts] = segments
  return { page: isPage(page) ? page : 'traces', parts, params: new URLSearchParams(query), project }
}

// The project the console has open: links to its pages name it unless a caller names another. Set by `main.tsx` as it
// renders, before the pages build their links, so the pages need not pass it to every `routeHash`.
let linkProject: string | undefined

/** Sets the project that `routeHash` puts into links to a project's pages (undefined: none is open). */
export function setLinkProject(project: string | undefined): void {
  linkProject = project
}

/**
 * The hash of a route: each part encoded, params appended; a project's page is prefixed with `<entity>/<project>` (the
 * open project unless one is given). A project that is not `<entity>/<project>` is left out.
 * @example routeHash('trace', ['t1'], { call: 'c1' }, 'acme/my bot') // '#/acme/my%20bot/trace/t1?call=c1'
 */
export function routeHash(
  page: PageId,
  parts: string[] = [],
  params?: Record<string, string>,
  project: string | undefined = linkProject,
): string {
  const slash = project?.indexOf('/') ?? -1
  const scope =
    project !== undefined && projectPage(page) && slash > 0 && slash < project.length - 1
      ? [project.slice(0, slash), project.slice(slash + 1)]
      : []
  const path = [...scope, page, ...parts].map(encodeURIComponent).join('/')
  const query = params === undefined ? '' : new URLSearchParams(params).toString()
  return `#/${path}${query === '' ? '' : `?${query}`}`
}

/**
 * The Sign in link from the route `from` (a hash): it carries the route (`#/signin?next=<hash>`), so signing in again
 * after the key was refused returns to the same page, filters and all (`returnHash`).
 */
export function signInHash(from: string): string {
  return from.startsWith('#/') && parseRoute(from).page !== 'signin'
    ? routeHash('signin', [], { next: from })
    : routeHash('signin')
}

/**
 * Where the Sign in page at `signin` (a hash) returns once signed in to `project`: the route its link came from, unless
 * none is given, it is the Sign in page itself, or it names another project than the one picked (undefined: the
 * picked project's Traces). Only a hash is returned, so a link cannot send the key's tab to another site.
 */
export function returnHash(signin: string, project: string | undefined): string | undefined {
  const next = parseRoute(signin).params.get('next')
  if (next === null || !next.startsWith('#/')) return undefined
  const back = parseRoute(next)
  if (back.page === 'signin' || (back.project !== undefined && back.project !== project)) return undefined
  return next
}

/** A project as `GET /projects` lists it. */
export type ListedProject = { project_id: string; entity: string; project: string }

/**
 * Whether a key whose `GET /projects` answer is `listed` may open a linked `project`: a key reads every project of its
 * entities, and the answer names the entities that hold data (a project of an entity without data holds none either).
 */
export function mayOpenProject(listed: readonly ListedProject[], project: string): boolean {
  const slash = project.indexOf('/')
  if (slash <= 0) return false
  const entity = project.slice(0, slash)
  return listed.some((p) => p.project_id === project || p.entity === entity)
}
