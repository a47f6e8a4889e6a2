import { useEffect, useMemo, useState } from 'preact/hooks'
import { CallTree } from '../components/CallTree'
import { Empty, ErrorBox, PageHeader } from '../components/common'
import { JsonViewer } from '../components/JsonViewer'
import type { Api } from '../lib/api'
import { type Call, callName, callStatus, tracePageRequest } from '../lib/calls'
import {
  browserTimeZone,
  durationBetween,
  formatCost,
  formatCount,
  formatCountOf,
  formatDateIn,
  formatDuration,
  formatTokens,
} from '../lib/format'
import { routeHash } from '../lib/route'
import { CallForest, descendantCount, timelineBounds, visibleRows } from '../lib/tree'
import { countedUsage, type Usage, usageTable } from '../lib/usage'

type Feedback = { id: string; feedback_type: string; payload: unknown; created_at: string; wb_user_id: string }

// The first page is small so the tree shows at once; later pages grow (500, 1,000, then 2,000 calls), so a large trace
// takes few requests.
const FIRST_PAGE = 100
const LAST_PAGE = 2000
const nextPage = (limit: number) => (limit === FIRST_PAGE ? 500 : Math.min(LAST_PAGE, limit * 2))
// Times are shown in the browser's time zone, named beside them.
const TIME_ZONE = browserTimeZone()

function UsageTable({ usage }: { usage: Usage | undefined }) {
  const table = usageTable(usage ?? {})
  if (table.rows.length === 0) return <p class="muted">No LLM usage recorded in this trace.</p>
  return (
    <div class="table-wrap">
      <p class="muted small" data-testid="trace-usage-pricing">
        Each LLM request once: a call's usage counts where no call below it records usage of the same model (the Weave
        SDKs add children's usage into their parents', so summing every call would count it again). Cost from the
        project's cost table (Weave <code>cost/create</code>); the Usage page prices completions from the model catalog.
      </p>
      <table data-testid="trace-usage-table">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Requests</th>
            <th scope="col">Prompt tokens</th>
            <th scope="col">Completion tokens</th>
            {table.cacheRead && <th scope="col">Cache read tokens</th>}
            {table.cacheCreation && <th scope="col">Cache creation tokens</th>}
            <th scope="col">Total tokens</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {table.rows.map((r) => (
            <tr key={r.model} data-testid="trace-usage-row">
              <td>{r.model}</td>
              <td class="num">{formatCount(r.requests)}</td>
              <td class="num">{formatTokens(r.prompt)}</td>
              <td class="num">{formatTokens(r.completion)}</td>
              {table.cacheRead && <td class="num">{formatTokens(r.cacheRead)}</td>}
              {table.cacheCreation && <td class="num">{formatTokens(r.cacheCreation)}</td>}
              <td class="num">{formatTokens(r.total)}</td>
              <td class="num" title={String(r.cost ?? '')}>
                {formatCost(r.cost)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function CallDetail({ api, project, id }: { api: Api; project: string; id: string }) {
  // null: `call/read` found no such call (it answers 200 `{"call": null}` for an unknown or deleted id).
  const [call, setCall] = useState<Call | null | undefined>()
  const [feedback, setFeedback] = useState<Feedback[] | undefined>()
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const abort = new AbortController()
    setCall(undefined)
    setFeedback(undefined)
    setError(undefined)
    api
      .post<{ call: Call | null }>('call/read', { project_id: project, id, include_costs: true }, abort.signal)
      .then((r) => setCall(r.call))
      .catch((err) => abort.signal.aborted || setError(err))
    const ref = `weave:///${project}/call/${id}`
    api
      .post<{ result: Feedback[] }>(
        'feedback/query',
        {
          project_id: project,
          query: { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: ref }] } },
          sort_by: [{ field: 'created_at', direction: 'desc' }],
        },
        abort.signal,
      )
      .then((r) => setFeedback(r.result))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, id])
  return (
    <section class="detail" aria-label="Selected call" data-testid="call-detail" data-call-id={id}>
      <ErrorBox error={error} testId="call-detail-error" />
      {call === undefined ? (
        <p class="muted">Loading call…</p>
      ) : call === null ? (
        <Empty testId="call-detail-missing">
          <p>
            Call not found (it may have been deleted): <code class="break">{id}</code>
          </p>
        </Empty>
      ) : (
        <>
          <h2 data-testid="call-detail-name">{callName(call)}</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd data-testid="call-detail-status">{callStatus(call)}</dd>
            <dt>Started</dt>
            <dd data-testid="call-detail-started">{formatDateIn(call.started_at, TIME_ZONE)}</dd>
            <dt>Duration</dt>
            <dd>{formatDuration(durationBetween(call.started_at, call.ended_at))}</dd>
            <dt>Op</dt>
            <dd class="break">{call.op_name}</dd>
            <dt>Call id</dt>
            <dd class="break">{call.id}</dd>
          </dl>
          {call.exception && (
            <>
              <h3>Exception</h3>
              <pre class="exception" data-testid="call-exception">
                {call.exception}
              </pre>
            </>
          )}
          <h3>Inputs</h3>
          <JsonViewer value={call.inputs ?? {}} label="Inputs" testId="json-inputs" />
          <h3>Output</h3>
          <JsonViewer value={call.output ?? null} label="Output" testId="json-output" />
          <h3>Attributes</h3>
          <JsonViewer value={call.attributes ?? {}} label="Attributes" testId="json-attributes" openDepth={1} />
          <h3>Summary</h3>
          {call.summary?.usage !== undefined && (
            <p class="muted small" data-testid="call-summary-note">
              The summary as this call's client recorded it. Its <code>usage</code> is this call's own figure: the Weave
              SDKs add the usage of the calls below into it, so it can differ from the trace's tokens and cost above,
              which count each request once.
            </p>
          )}
          <JsonViewer value={call.summary ?? {}} label="Summary" testId="json-summary" openDepth={1} />
        </>
      )}
      <h3>Feedback</h3>
      {feedback === undefined ? (
        <p class="muted">Loading feedback…</p>
      ) : feedback.length === 0 ? (
        <p class="muted" data-testid="call-feedback-empty">
          No feedback on this call.
        </p>
      ) : (
        <ul class="feedback-list" data-testid="call-feedback">
          {feedback.map((f, i) => (
            <li key={f.id} data-testid="call-feedback-item">
              <strong>{f.feedback_type}</strong>{' '}
              <span class="muted small">
                {formatDateIn(f.created_at, TIME_ZONE)} · {f.wb_user_id}
              </span>
              <JsonViewer
                value={f.payload}
                label={`Feedback ${i + 1}: ${f.feedback_type}`}
                testId="json-feedback"
                openDepth={1}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

/** The trace view: the call tree with its waterfall, the selected call's details and feedback, the usage roll-up. */
export function TracePage({
  api,
  project,
  traceId,
  selected,
}: {
  api: Api
  project: string
  traceId: string
  selected: string | undefined
}) {
  const [forest, setForest] = useState(() => new CallForest<Call>())
  const [version, setVersion] = useState(0)
  const [done, setDone] = useState(false)
  const [error, setError] = useState<unknown>()
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set())
  const [now, setNow] = useState(Date.now())

  // The trace in pages, in the trace index's (id) order: each page is drawn as it arrives while the next is read, so
  // the first rows show after one small request however large the trace; calls that come before their parent move
  // under it when it arrives (CallForest). The tokens and cost are counted from the calls themselves once every page
  // is in (lib/usage.ts), the same count as the Traces table's.
  useEffect(() => {
    const abort = new AbortController()
    const tree = new CallForest<Call>()
    setForest(tree)
    setVersion(0)
    setDone(false)
    setError(undefined)
    const fail = (err: unknown) => abort.signal.aborted || setError(err)
    const load = async () => {
      let after: string | undefined
      for (let limit = FIRST_PAGE; ; limit = nextPage(limit)) {
        const page: Call[] = []
        await api.stream<Call>(
          'calls/stream_query',
          tracePageRequest(project, traceId, after, limit),
          (rows) => page.push(...rows),
          abort.signal,
        )
        if (abort.signal.aborted) return
        tree.add(page)
        setVersion(tree.version)
        if (page.length < limit) break
        after = page.at(-1)?.id
      }
      setNow(Date.now())
      setDone(true)
    }
    load().catch(fail)
    return () => abort.abort()
  }, [api, project, traceId])

  const roots = forest.roots
  // The forest changes in place; `version` counts its changes.
  const rows = useMemo(() => visibleRows(roots, collapsed), [roots, collapsed, version])
  const bounds = useMemo(() => timelineBounds(forest.calls(), now), [forest, version, now])
  // While pages arrive, a root may be a call whose parent is still to come: the trace's own root is the default.
  const root = roots.find((r) => !r.orphan) ?? (done ? roots[0] : undefined)
  const current = selected ?? root?.call.id
  const below = root === undefined ? 0 : descendantCount(root)
  // The forest changes in place; `version` counts its changes (the count runs once, when the last page is in).
  const usage = useMemo(() => (done ? countedUsage(forest.calls()) : undefined), [forest, done, version])
  const select = (id: string) => {
    location.replace(routeHash('trace', [traceId], { call: id }))
  }
  const toggle = (id: string) =>
    setCollapsed((c) => {
      const next = new Set(c)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })

  return (
    <div data-testid="page-trace">
      <PageHeader title={root === undefined ? 'Trace' : `Trace: ${callName(root.call)}`}>
        <a href={routeHash('traces')}>Back to traces</a>
      </PageHeader>
      <p class="muted small" data-testid="trace-meta">
        {formatCountOf(forest.size, 'call')}
        {done ? '' : ' (loading…)'} · {formatDuration(bounds.end - bounds.start)} · trace {traceId}
      </p>
      <ErrorBox error={error} testId="trace-error" />
      {done && forest.size === 0 ? (
        <Empty testId="trace-empty">
          <p>
            No calls found for trace <code class="break">{traceId}</code>. It may have been deleted, or belong to
            another project.
          </p>
        </Empty>
      ) : (
        <>
          <section aria-label="Usage roll-up" data-testid="trace-usage">
            <h2>Tokens and cost</h2>
            {usage === undefined ? (
              <p class="muted">Loading usage…</p>
            ) : (
              roots.map((r) => (
                <div key={r.call.id}>
                  {roots.length > 1 && <h3>{callName(r.call)}</h3>}
                  <UsageTable usage={usage.get(r.call.id)} />
                </div>
              ))
            )}
          </section>
          <div class="trace-layout">
            <section aria-label="Calls" class="trace-tree-panel">
              <div class="tree-toolbar">
                <button
                  type="button"
                  class="secondary"
                  onClick={() => setCollapsed(new Set())}
                  data-testid="tree-expand-all"
                >
                  Expand all
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    setCollapsed(
                      new Set(
                        roots.flatMap((r) => r.children.filter((c) => c.children.length > 0).map((c) => c.call.id)),
                      ),
                    )
                  }
                  data-testid="tree-collapse-all"
                >
                  Collapse below roots
                </button>
                {below > 0 && (
                  <span class="muted small" data-testid="trace-under-root">
                    {formatCountOf(below, 'call')} under the root
                  </span>
                )}
              </div>
              <CallTree rows={rows} bounds={bounds} now={now} selected={current} onSelect={select} onToggle={toggle} />
            </section>
            {current !== undefined && <CallDetail api={api} project={project} id={current} />}
          </div>
        </>
      )}
    </div>
  )
}
