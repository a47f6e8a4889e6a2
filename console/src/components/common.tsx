import type { ComponentChildren } from 'preact'
import { ApiError, errorSummary } from '../lib/api'
import { parseRoute, signInHash } from '../lib/route'

/**
 * An error as the page shows it: for an API error what the page could not do, the status and the API's own message
 * (`errorSummary`). A refused key (401) adds a link to sign in again that comes back to this page, except on the Sign
 * in page (`signIn={false}`: its form shows at `#/signin` and at any page's link while signed out), whose form is
 * right there.
 */
export function ErrorBox({
  error,
  testId = 'error',
  signIn = true,
}: {
  error: unknown
  testId?: string
  signIn?: boolean
}) {
  if (error === undefined || error === null) return null
  const here = location.hash
  const refused = signIn && error instanceof ApiError && error.status === 401 && parseRoute(here).page !== 'signin'
  return (
    <p class="error" role="alert" data-testid={testId}>
      {errorSummary(error)}
      {refused && (
        <>
          {' '}
          <a href={signInHash(here)} data-testid="sign-in-again">
            Sign in again
          </a>
        </>
      )}
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

/**
 * The test ids of a pager: the bar, its Previous and Next buttons and the range between them; a prefix `p` names them
 * `p-pager`, `p-prev`, `p-range` and `p-next`.
 */
export type PagerIds = { bar: string; prev: string; range: string; next: string } | string

/**
 * Previous, the rows shown ("26–50 of 120") and Next, for a list read `size` rows at a time from `offset`; `onPage` gets
 * the new offset. `range`, `hasNext` and `previous` (Previous's offset, one page back unless given) come from
 * `pagerState` (lib/calls.ts).
 */
export function Pager({
  offset,
  size,
  range,
  hasNext,
  previous = Math.max(0, offset - size),
  onPage,
  ids,
}: {
  offset: number
  size: number
  range: string
  hasNext: boolean
  previous?: number
  onPage: (offset: number) => void
  ids: PagerIds
}) {
  const named =
    typeof ids === 'string'
      ? { bar: `${ids}-pager`, prev: `${ids}-prev`, range: `${ids}-range`, next: `${ids}-next` }
      : ids
  return (
    <div class="pager" data-testid={named.bar}>
      <button type="button" disabled={offset === 0} onClick={() => onPage(previous)} data-testid={named.prev}>
        Previous
      </button>
      <span class="muted" data-testid={named.range}>
        {range}
      </span>
      <button type="button" disabled={!hasNext} onClick={() => onPage(offset + size)} data-testid={named.next}>
        Next
      </button>
    </div>
  )
}

/** What an empty page past a list's last row says (its rows went away since the link was made), with a way back. */
export function PastLastPage({ text, onFirst, testId }: { text: string; onFirst: () => void; testId: string }) {
  return (
    <p>
      {text}{' '}
      <button type="button" class="link" onClick={onFirst} data-testid={testId}>
        Go to the first page
      </button>
    </p>
  )
}
