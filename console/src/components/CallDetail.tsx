import { useEffect, useState } from 'preact/hooks'
import type { Api } from '../lib/api'
import { type Call, callName, callStatus } from '../lib/calls'
import { browserTimeZone, durationBetween, formatDateIn, formatDuration } from '../lib/format'
import { Empty, ErrorBox } from './common'
import { JsonViewer } from './JsonViewer'

type Feedback = { id: string; feedback_type: string; payload: unknown; created_at: string; wb_user_id: string }

// Times are shown in the browser's time zone, named beside them.
const TIME_ZONE = browserTimeZone()

/** The trace view's selected call: its name, status, times, inputs, output and feedback (`call/read`, `feedback/query`). */
export function CallDetail({ api, project, id }: { api: Api; project: string; id: string }) {
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
