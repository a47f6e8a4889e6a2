// Whether a route pattern (`/v1/models/:id`, `/files/*`) covers a path; a parameter's own pattern is not checked.
function covers(pattern: string, path: string): boolean {
  const want = pattern.split('/')
  const got = path.split('/')
  for (let i = 0; i < want.length; i++) {
    const part = want[i] as string
    if (part === '*' && i === want.length - 1) return true
    const seen = got[i]
    if (seen === undefined) return part.startsWith(':') && part.endsWith('?')
    if (part.startsWith(':') ? seen === '' : part !== seen) return false
  }
  return want.length === got.length
}

/**
 * The methods an app's own routes serve at a path (middleware, registered for every method, aside), to tell a 405
 * from a 404 for a request no route matched; a loop over the app's few routes, off every matched request's path.
 */
export function methodsAt(app: { routes: readonly { method: string; path: string }[] }, path: string): string[] {
  // Family apps route a trailing slash as the path without it (`strict: false`).
  const bare = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  const methods = new Set<string>()
  for (const route of app.routes) if (route.method !== 'ALL' && covers(route.path, bare)) methods.add(route.method)
  return [...methods]
}
