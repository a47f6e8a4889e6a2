import { render } from 'preact'
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks'
import './styles.css'
import { ErrorBox, PageHeader } from './components/common'
import { ErrorBoundary } from './components/ErrorBoundary'
import { Api } from './lib/api'
import { ROUTE_SHOWN } from './lib/navigate'
import {
  type ListedProject,
  mayOpenProject,
  PAGES,
  type PageId,
  parseRoute,
  projectPage,
  returnHash,
  routeHash,
  setLinkProject,
} from './lib/route'
import { clearSession, loadSession, type Session, saveSession } from './lib/session'
import { ApiPage } from './pages/ApiPage'
import { FeedbackPage } from './pages/FeedbackPage'
import { ObjectsPage } from './pages/ObjectsPage'
import { QueuesPage } from './pages/QueuesPage'
import { SignInPage } from './pages/SignInPage'
import { TracePage } from './pages/TracePage'
import { TracesPage } from './pages/TracesPage'
import { TrainingPage } from './pages/TrainingPage'
import { UsagePage } from './pages/UsagePage'

function useHash(): string {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const onChange = () => setHash(location.hash)
    addEventListener('hashchange', onChange)
    addEventListener(ROUTE_SHOWN, onChange)
    return () => {
      removeEventListener('hashchange', onChange)
      removeEventListener(ROUTE_SHOWN, onChange)
    }
  }, [])
  return hash
}

function Nav({
  current,
  session,
  onSignOut,
}: {
  current: PageId
  session: Session | undefined
  onSignOut: () => void
}) {
  const active = current === 'trace' ? 'traces' : current
  return (
    <nav class="nav" aria-label="Console">
      <a class="brand" href={routeHash('traces')}>
        Loom
      </a>
      <ul>
        {PAGES.map((p) => (
          <li key={p.id}>
            <a href={routeHash(p.id)} aria-current={active === p.id ? 'page' : undefined} data-testid={`nav-${p.id}`}>
              {p.label}
            </a>
          </li>
        ))}
      </ul>
      <div class="nav-session">
        {session?.project !== undefined && (
          <span class="muted" data-testid="nav-project">
            {session.project}
          </span>
        )}
        {session !== undefined && (
          <button type="button" class="link" onClick={onSignOut} data-testid="sign-out">
            Sign out
          </button>
        )}
      </div>
    </nav>
  )
}

/**
 * A link names a project other than the session's: the key's projects are read, and the linked project becomes the
 * session's when the key may open it; otherwise `denied` says so. Undefined while there is nothing to check or the
 * answer is awaited.
 */
function useLinkedProject(
  api: Api | undefined,
  session: Session | undefined,
  linked: string | undefined,
  adopt: (s: Session) => void,
): { denied: string; error: unknown } | undefined {
  const [denied, setDenied] = useState<{ denied: string; error: unknown } | undefined>()
  const pending = api !== undefined && session !== undefined && linked !== undefined && linked !== session.project
  useEffect(() => {
    setDenied(undefined)
    if (!pending) return
    const abort = new AbortController()
    api
      .get<{ projects: ListedProject[] }>('projects', undefined, abort.signal)
      .then((r) => {
        if (mayOpenProject(r.projects, linked)) adopt({ key: session.key, project: linked })
        else setDenied({ denied: linked, error: undefined })
      })
      .catch((error) => abort.signal.aborted || setDenied({ denied: linked, error }))
    return () => abort.abort()
  }, [api, session?.key, session?.project, linked])
  return pending ? denied : undefined
}

/** What a link to a project the key may not open shows instead of the page. */
function ProjectDenied({ project, current, error }: { project: string; current: string | undefined; error: unknown }) {
  return (
    <div data-testid="project-denied">
      <PageHeader title="Project not available" />
      <ErrorBox error={error} testId="project-denied-error" />
      <p class="empty">
        This link is for the project <strong>{project}</strong>, which this key cannot open: none of its entities holds
        that project, or the project holds no data.
      </p>
      <p>
        {current !== undefined && (
          <>
            <a href={routeHash('traces', [], undefined, current)} data-testid="project-denied-current">
              Open {current}
            </a>{' '}
            or{' '}
          </>
        )}
        <a href={routeHash('signin')}>sign in with another key</a>.
      </p>
    </div>
  )
}

function App() {
  const hash = useHash()
  const route = parseRoute(hash)
  const [session, setSession] = useState<Session | undefined>(loadSession)
  const api = useMemo(() => (session === undefined ? undefined : new Api(session.key, location.href)), [session?.key])
  const signIn = useCallback((next: Session) => {
    saveSession(next)
    setSession(next)
    // A deep link that needed the key (a trace, a queue) opens once signed in; the Sign in page goes back to the page
    // its link came from (a refused key's "Sign in again"), in place of the sign-in entry, else on to Traces.
    if (parseRoute(location.hash).page !== 'signin') return
    const back = returnHash(location.hash, next.project)
    if (back === undefined) location.hash = routeHash('traces', [], undefined, next.project)
    else location.replace(back)
  }, [])
  const signOut = useCallback(() => {
    clearSession()
    setSession(undefined)
    location.hash = routeHash('signin')
  }, [])
  const adopt = useCallback((next: Session) => {
    saveSession(next)
    setSession(next)
  }, [])
  const needsSession = projectPage(route.page)
  // A link's project wins over the session's once the key is known to open it (until then the page waits).
  const linked = needsSession ? route.project : undefined
  const denied = useLinkedProject(api, session, linked, adopt)
  const waiting = linked !== undefined && linked !== session?.project
  const project = waiting ? undefined : session?.project
  setLinkProject(project)
  let page = null
  const signingIn =
    route.page === 'signin' || (needsSession && (api === undefined || (session?.project ?? linked) === undefined))
  if (signingIn) {
    // The picker starts at the linked project, so signing in from a shared link opens what it names (or the project of
    // the page a Sign in link came from).
    const back = route.page === 'signin' ? parseRoute(route.params.get('next') ?? '').project : undefined
    const start = linked ?? back ?? session?.project
    page = <SignInPage session={{ key: session?.key ?? '', project: start }} onSignIn={signIn} />
  } else if (route.page === 'api') {
    page = <ApiPage />
  } else if (waiting) {
    page =
      denied === undefined ? (
        <p class="muted" data-testid="project-checking">
          Opening {linked}…
        </p>
      ) : (
        <ProjectDenied project={denied.denied} current={session?.project} error={denied.error} />
      )
  } else if (api !== undefined && project !== undefined) {
    const props = { api, project }
    switch (route.page) {
      case 'traces':
        page = <TracesPage {...props} params={route.params} />
        break
      case 'trace':
        // Keyed by trace: another trace starts empty and loading, never drawn for a frame as the previous one's calls
        // (and their root's details) under the new trace's id until its effects run after paint.
        page = (
          <TracePage
            key={route.parts[0]}
            {...props}
            traceId={route.parts[0] ?? ''}
            selected={route.params.get('call') ?? undefined}
          />
        )
        break
      case 'feedback':
        page = <FeedbackPage {...props} params={route.params} />
        break
      case 'usage':
        page = <UsagePage {...props} params={route.params} />
        break
      case 'training':
        page = <TrainingPage {...props} params={route.params} />
        break
      case 'queues':
        page = <QueuesPage {...props} queueId={route.parts[0]} />
        break
      case 'objects':
        page = <ObjectsPage {...props} objectId={route.parts[0]} params={route.params} />
        break
    }
  }
  // An older link without the project (`#/trace/<id>`) or the bare console URL is rewritten in place to name the
  // project it shows, so the address bar can be shared as it is.
  const unnamed = !signingIn && needsSession && route.project === undefined && project !== undefined
  useEffect(() => {
    if (unnamed) location.replace(routeHash(route.page, route.parts, Object.fromEntries(route.params), project))
  }, [hash, unnamed])
  useEffect(() => {
    const label = PAGES.find((p) => p.id === route.page)?.label ?? 'Trace'
    document.title = `${label} · Loom Console`
  }, [route.page])
  return (
    <>
      {/* A button, not a `#main` link: the hash is the console's route. */}
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <Nav current={signingIn ? 'signin' : route.page} session={session} onSignOut={signOut} />
      <main id="main" tabIndex={-1}>
        <ErrorBoundary resetKey={hash}>{page}</ErrorBoundary>
      </main>
    </>
  )
}

const root = document.getElementById('app')
if (root !== null) render(<App />, root)
