import { useState } from 'preact/hooks'
import { ErrorBox, PageHeader, SendDataHint } from '../components/common'
import { Api } from '../lib/api'
import type { Session } from '../lib/session'

type Project = { project_id: string; entity: string; project: string; first_seen_at: string }

/**
 * Sign in: the key (a password field; kept in this tab's sessionStorage only) and a project picker listing the
 * projects of the key's entities that hold data (`GET /projects`).
 */
export function SignInPage({ session, onSignIn }: { session: Session | undefined; onSignIn: (s: Session) => void }) {
  const [key, setKey] = useState(session?.key ?? '')
  const [projects, setProjects] = useState<Project[] | undefined>()
  const [choice, setChoice] = useState(session?.project ?? '')
  const [typed, setTyped] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)

  async function loadProjects(e: Event) {
    e.preventDefault()
    setError(undefined)
    setBusy(true)
    try {
      const res = await new Api(key.trim(), location.href).get<{ projects: Project[] }>('projects')
      setProjects(res.projects)
      if (!res.projects.some((p) => p.project_id === choice)) setChoice(res.projects[0]?.project_id ?? '')
    } catch (err) {
      setProjects(undefined)
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  function open(e: Event) {
    e.preventDefault()
    const project = typed.trim() !== '' ? typed.trim() : choice
    // A project name may hold spaces (the API takes any name W&B takes: docs/tracing.md §2); the entity may not.
    if (!/^[^/\s]+\/[^/]+$/.test(project)) {
      setError(new Error('A project is `<entity>/<project>`.'))
      return
    }
    onSignIn({ key: key.trim(), project })
  }

  return (
    <div data-testid="page-signin">
      <PageHeader title="Sign in" />
      <form class="card form" onSubmit={loadProjects} data-testid="signin-form">
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          data-testid="signin-key"
        />
        <p class="muted small">
          The key stays in this browser tab (sessionStorage) and is sent only to this Loom server. `npm start` prints
          one on first start; `npm run keys` creates more.
        </p>
        <button type="submit" disabled={busy || key.trim() === ''} data-testid="signin-submit">
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      <ErrorBox error={error} testId="signin-error" signIn={false} />
      {projects !== undefined && (
        <form class="card form" onSubmit={open} data-testid="project-form">
          {projects.length > 0 ? (
            <>
              <label for="project-picker">Project</label>
              <select
                id="project-picker"
                value={choice}
                onChange={(e) => setChoice(e.currentTarget.value)}
                data-testid="project-picker"
              >
                {projects.map((p) => (
                  <option key={p.project_id} value={p.project_id}>
                    {p.project_id}
                  </option>
                ))}
              </select>
            </>
          ) : (
            <div data-testid="projects-empty">
              <p>No project of this key's entities holds data yet.</p>
              <SendDataHint project={undefined} />
            </div>
          )}
          <label for="project-typed">Or another project (entity/project)</label>
          <input
            id="project-typed"
            type="text"
            placeholder="entity/project"
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
            data-testid="project-typed"
          />
          <button type="submit" data-testid="project-open">
            Open project
          </button>
        </form>
      )}
    </div>
  )
}
