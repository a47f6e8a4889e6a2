import { useEffect, useMemo, useState } from 'preact/hooks'
import { CallTree } from '../components/CallTree'
import { ErrorBox, PageHeader } from '../components/common'
import { JsonViewer } from '../components/JsonViewer'
import type { Api } from '../lib/api'
import { type Call, callName, callStatus } from '../lib/calls'
import { durationBetween, formatCost, formatCount, formatDate, formatDuration, formatTokens } from '../lib/format'
import { routeHash } from '../lib/route'
import { buildCallTree, subtreeSize, timelineBounds, visibleRows } from '../lib/tree'

type Usage = {
  requests: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_total_cost: number | null
  completion_tokens_total_cost: number | null
}
type Feedback = { id: string; feedback_type: string; payload: unknown; created_at: string; wb_user_id: string }

const TREE_COLUMNS = [
  'id',
  'op_name',
  'display_name',
  'trace_id',
  'parent_id',
  'started_at',
  'ended_at',
  'exception',
  'summary',
]

function UsageTable({ usage }: { usage: Record<string, Usage> | undefined }) {
  const models = Object.entries(usage ?? {})
  if (models.length === 0) return <p class="muted">No LLM usage recorded in this trace.</p>
  const cost = (u: Usage) =>
    u.prompt_tokens_total_cost === null && u.completion_tokens_total_cost === null
      ? null
      : (u.prompt_tokens_total_cost ?? 0) + (u.completion_tokens_total_cost ?? 0)
  return (
    <div class="table-wrap">
      <table data-testid="trace-usage-table">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Requests</th>
            <th scope="col">Prompt tokens</th>
            <th scope="col">Completion tokens</th>
            <th scope="col">Total tokens</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {models.map(([model, u]) => (
            <tr key={model} data-testid="trace-usage-row">
              <td>{model}</td>
              <td class="num">{formatCount(u.requests)}</td>
              <td class="num">{formatTokens(u.prompt_tokens)}</td>
              <td class="num">{formatTokens(u.completion_tokens)}</td>
              <td class="num">{formatTokens(u.total_tokens)}</td>
              <td class="num" title={String(cost(u) ?? '')}>
                {formatCost(cost(u))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function CallDetail({ api, project, id }: { api: Api; project: string; id: string }) {
  const [call, setCall] = useState<Call | undefined>()
  const [feedback, setFeedback] = useState<Feedback[] | undefined>()
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const abort = new AbortController()
    setCall(undefined)
    setFeedback(undefined)
    setError(undefined)
    api
      .post<{ call: Call }>('call/read', { project_id: project, id, include_costs: true }, abort.signal)
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
      ) : (
        <>
          <h2 data-testid="call-detail-name">{callName(call)}</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd data-testid="call-detail-status">{callStatus(call)}</dd>
            <dt>Started</dt>
            <dd>{formatDate(call.started_at)}</dd>
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
          {feedback.map((f) => (
            <li key={f.id} data-testid="call-feedback-item">
              <strong>{f.feedback_type}</strong>{' '}
              <span class="muted small">
                {formatDate(f.created_at)} · {f.wb_user_id}
              </span>
              <JsonViewer
                value={f.payload}
                label={`Feedback ${f.feedback_type}`}
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
  const [calls, setCalls] = useState<Call[]>([])
  const [done, setDone] = useState(false)
  const [usage, setUsage] = useState<Record<string, Record<string, Usage>> | undefined>()
  const [error, setError] = useState<unknown>()
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set())
  const [now, setNow] = useState(Date.now())

  useEffect(() => {
    const abort = new AbortController()
    const rows: Call[] = []
    let frame = 0
    setCalls([])
    setDone(false)
    setError(undefined)
    api
      .stream<Call>(
        'calls/stream_query',
        {
          project_id: project,
          filter: { trace_ids: [traceId] },
          sort_by: [{ field: 'started_at', direction: 'asc' }],
          columns: TREE_COLUMNS,
        },
        (batch) => {
          rows.push(...batch)
          // One render per frame however many batches arrive.
          if (frame === 0) {
            frame = requestAnimationFrame(() => {
              frame = 0
              setCalls([...rows])
            })
          }
        },
        abort.signal,
      )
      .then(() => {
        cancelAnimationFrame(frame)
        setCalls([...rows])
        setNow(Date.now())
        setDone(true)
      })
      .catch((err) => abort.signal.aborted || setError(err))
    api
      .post<{ call_usage: Record<string, Record<string, Usage>> }>(
        'trace/usage',
        { project_id: project, filter: { trace_ids: [traceId] }, include_costs: true },
        abort.signal,
      )
      .then((r) => setUsage(r.call_usage))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => {
      abort.abort()
      cancelAnimationFrame(frame)
    }
  }, [api, project, traceId])

  const roots = useMemo(() => buildCallTree(calls), [calls])
  const rows = useMemo(() => visibleRows(roots, collapsed), [roots, collapsed])
  const bounds = useMemo(() => timelineBounds(calls, now), [calls, now])
  const current = selected ?? roots[0]?.call.id
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
  const root = roots[0]

  return (
    <div data-testid="page-trace">
      <PageHeader title={root === undefined ? 'Trace' : `Trace: ${callName(root.call)}`}>
        <a href={routeHash('traces')}>Back to traces</a>
      </PageHeader>
      <p class="muted small" data-testid="trace-meta">
        {formatCount(calls.length)} calls{done ? '' : ' (loading…)'} · {formatDuration(bounds.end - bounds.start)} ·
        trace {traceId}
      </p>
      <ErrorBox error={error} testId="trace-error" />
      <section aria-label="Usage roll-up" data-testid="trace-usage">
        <h2>Tokens and cost</h2>
        {usage === undefined ? (
          <p class="muted">Loading usage…</p>
        ) : (
          roots.map((r) => (
            <div key={r.call.id}>
              {roots.length > 1 && <h3>{callName(r.call)}</h3>}
              <UsageTable usage={usage[r.call.id]} />
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
                  new Set(roots.flatMap((r) => r.children.filter((c) => c.children.length > 0).map((c) => c.call.id))),
                )
              }
              data-testid="tree-collapse-all"
            >
              Collapse below roots
            </button>
            {root !== undefined && (
              <span class="muted small">{formatCount(subtreeSize(root))} calls under the root</span>
            )}
          </div>
          <CallTree rows={rows} bounds={bounds} now={now} selected={current} onSelect={select} onToggle={toggle} />
        </section>
        {current !== undefined && <CallDetail api={api} project={project} id={current} />}
      </div>
    </div>
  )
}
