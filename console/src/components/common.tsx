import type { ComponentChildren } from 'preact'
import { ApiError } from '../lib/api'

/** An API error as the page shows it: status, path and the API's own message. */
export function ErrorBox({ error, testId = 'error' }: { error: unknown; testId?: string }) {
  if (error === undefined || error === null) return null
  const message =
    error instanceof ApiError
      ? `${error.status} from ${error.path}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error)
  return (
    <p class="error" role="alert" data-testid={testId}>
      {message}
    </p>
  )
}

/** An empty state that says what to do. */
export function Empty({ children, testId = 'empty' }: { children: ComponentChildren; testId?: string }) {
  return (
    <div class="empty" data-testid={testId}>
      {children}
    </div>
  )
}

/** The two ways data reaches a project, for empty states. */
export function SendDataHint({ project }: { project: string | undefined }) {
  const base = new URL('../', location.href).href.replace(/\/$/, '')
  return (
    <>
      <p>Send traces with the Weave SDK pointed at Loom:</p>
      <pre>
        {`WF_TRACE_SERVER_URL=${base}\nWANDB_API_KEY=<your Loom key>\n# then weave.init("${project ?? '<entity>/<project>'}")`}
      </pre>
      <p>or call models through Loom's OpenAI-compatible API, which traces and meters every completion:</p>
      <pre>{`OPENAI_BASE_URL=${base}/v1\nOPENAI_API_KEY=<your Loom key>`}</pre>
    </>
  )
}

/** A page's heading row. */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1>{title}</h1>
      {children}
    </header>
  )
}
