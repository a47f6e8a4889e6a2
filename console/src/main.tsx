import { render } from 'preact'
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks'
import './styles.css'
import { ErrorBoundary } from './components/ErrorBoundary'
import { Api } from './lib/api'
import { PAGES, type PageId, parseRoute, routeHash } from './lib/route'
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
    return () => removeEventListener('hashchange', onChange)
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

function App() {
  const hash = useHash()
  const route = parseRoute(hash)
  const [session, setSession] = useState<Session | undefined>(loadSession)
  const api = useMemo(() => (session === undefined ? undefined : new Api(session.key, location.href)), [session?.key])
  const signIn = useCallback((next: Session) => {
    saveSession(next)
    setSession(next)
    // A deep link that needed the key (a trace, a queue) opens once signed in; the Sign in page goes on to Traces.
    if (parseRoute(location.hash).page === 'signin') location.hash = routeHash('traces')
  }, [])
  const signOut = useCallback(() => {
    clearSession()
    setSession(undefined)
    location.hash = routeHash('signin')
  }, [])
  const needsSession = route.page !== 'signin' && route.page !== 'api'
  const project = session?.project
  let page = null
  const signingIn = route.page === 'signin' || (needsSession && (api === undefined || project === undefined))
  if (signingIn) {
    page = <SignInPage session={session} onSignIn={signIn} />
  } else if (route.page === 'api') {
    page = <ApiPage />
  } else if (api !== undefined && project !== undefined) {
    const props = { api, project }
    switch (route.page) {
      case 'traces':
        page = <TracesPage {...props} />
        break
      case 'trace':
        page = <TracePage {...props} traceId={route.parts[0] ?? ''} selected={route.params.get('call') ?? undefined} />
        break
      case 'feedback':
        page = <FeedbackPage {...props} />
        break
      case 'usage':
        page = <UsagePage {...props} />
        break
      case 'training':
        page = <TrainingPage {...props} />
        break
      case 'queues':
        page = <QueuesPage {...props} queueId={route.parts[0]} />
        break
      case 'objects':
        page = <ObjectsPage {...props} objectId={route.parts[0]} />
        break
    }
  }
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
