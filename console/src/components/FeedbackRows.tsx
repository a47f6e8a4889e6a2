import { useEffect, useState } from 'preact/hooks'
import type { Api } from '../lib/api'
import { type Call, callName, pagerState } from '../lib/calls'
import { feedbackWindow } from '../lib/charts'
import {
  FEEDBACK_PAGE_SIZE,
  type FeedbackRow,
  feedbackCallsRequest,
  feedbackRowsRequest,
  payloadValue,
} from '../lib/feedback-rows'
import { formatCountOf, formatDate } from '../lib/format'
import { callRef } from '../lib/refs'
import { routeHash } from '../lib/route'
import { compactValue } from '../lib/table-rows'
import { Empty, ErrorBox, Pager, PastLastPage } from './common'
import { JsonViewer } from './JsonViewer'

type Props = {
  api: Api
  project: string
  type: string
  hours: number
  /** The chosen metric's `json_path` (its value gets a column), undefined when the type has none. */
  metric: string | undefined
  zone: string
  offset: number
  onPage: (offset: number) => void
}

type CallInfo = Pick<Call, 'id' | 'trace_id' | 'op_name' | 'display_name'>

/** The call a feedback row is on: its name linking to the call in its trace; another ref as text. */
function CallCell({
  weaveRef,
  project,
  calls,
}: {
  weaveRef: string
  project: string
  calls: Map<string, CallInfo> | undefined
}) {
  const target = callRef(weaveRef)
  // A call of another project, or an object's ref: the page has no trace of it to open.
  if (target === undefined || target.project !== project) {
    return (
      <span class="mono break" data-testid="feedback-row-ref">
        {weaveRef}
      </span>
    )
  }
  const call = calls?.get(target.callId)
  if (call === undefined) {
    return (
      <span class="mono break" data-testid="feedback-row-ref">
        {calls === undefined ? target.callId : `${target.callId} (call not found)`}
      </span>
    )
  }
  return (
    <a
      href={routeHash('trace', [call.trace_id], { call: call.id })}
      title={`Call ${call.id}`}
      data-testid="feedback-row-call"
    >
      {callName(call)}
    </a>
  )
}

/**
 * The newest feedback of a type in the chart's window, a page at a time (`feedback/query`), with the chosen metric's
 * value, who left it and the call it is on; a row's payload opens in the JSON viewer. The calls of a page come from one
 * `calls/stream_query` (`filter.call_ids`), which gives each link its trace.
 */
export function FeedbackRows({ api, project, type, hours, metric, zone, offset, onPage }: Props) {
  // A page with the request it was read for: another page is loading from the render that asks for it (effects run
  // after paint), so the previous page's rows never show under the new range.
  const pageKey = `${project} ${type} ${hours} ${offset}`
  const [read, setRead] = useState<{ key: string; rows: FeedbackRow[]; total: number }>()
  const page = read?.key === pageKey ? read : undefined
  const [calls, setCalls] = useState<Map<string, CallInfo> | undefined>()
  const [expanded, setExpanded] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    if (type === '') return
    const abort = new AbortController()
    setCalls(undefined)
    setExpanded(undefined)
    setError(undefined)
    const request = feedbackRowsRequest(project, type, feedbackWindow(hours, new Date()), {
      offset,
      limit: FEEDBACK_PAGE_SIZE,
    })
    api
      .post<{ result: FeedbackRow[]; total_count: number }>('feedback/query', request, abort.signal)
      .then(async (r) => {
        setRead({ key: pageKey, rows: r.result, total: r.total_count })
        const ids = r.result.flatMap((f) => {
          const target = callRef(f.weave_ref)
          return target?.project === project ? [target.callId] : []
        })
        const found = new Map<string, CallInfo>()
        if (ids.length > 0) {
          await api.stream<CallInfo>(
            'calls/stream_query',
            feedbackCallsRequest(project, ids),
            (batch) => {
              for (const call of batch) found.set(call.id, call)
            },
            abort.signal,
          )
        }
        if (!abort.signal.aborted) setCalls(found)
      })
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, type, hours, offset])

  const rows = page?.rows ?? []
  const pager = pagerState(
    offset,
    rows.length,
    FEEDBACK_PAGE_SIZE,
    page === undefined ? undefined : { count: page.total },
  )
  const columns = metric === undefined ? 5 : 6
  return (
    <section aria-label="Feedback rows" data-testid="feedback-rows-section">
      <h2>
        Newest {type} feedback{' '}
        <span class="muted small" data-testid="feedback-rows-total">
          {page === undefined ? '' : `${formatCountOf(page.total, 'row')} in this window`}
        </span>
      </h2>
      <ErrorBox error={error} testId="feedback-rows-error" />
      {page !== undefined && rows.length === 0 ? (
        <Empty testId="feedback-rows-empty">
          {offset > 0 ? (
            <PastLastPage
              text="No feedback on this page: the window holds fewer rows now."
              onFirst={() => onPage(0)}
              testId="feedback-rows-first"
            />
          ) : (
            <p>{`No ${type} feedback in this window.`}</p>
          )}
        </Empty>
      ) : (
        error === undefined && (
          <div class="table-wrap">
            <table class="rows-table" data-testid="feedback-rows" aria-busy={page === undefined}>
              <caption class="sr-only">Newest feedback of type {type}</caption>
              <thead>
                <tr>
                  <th scope="col" class="wraps" data-testid="feedback-rows-time-column">
                    Time ({zone})
                  </th>
                  <th scope="col">Type</th>
                  {metric !== undefined && <th scope="col">{metric}</th>}
                  <th scope="col">User</th>
                  <th scope="col">Call</th>
                  <th scope="col">Payload</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((f) => {
                  const open = expanded === f.id
                  const value = metric === undefined ? undefined : payloadValue(f.payload, metric)
                  return [
                    <tr key={f.id} data-testid="feedback-row" data-feedback-id={f.id} class={open ? 'selected' : ''}>
                      <td class="date" data-testid="feedback-row-time">
                        {formatDate(f.created_at, zone)}
                      </td>
                      <td>{f.feedback_type}</td>
                      {metric !== undefined && (
                        <td class={typeof value === 'number' ? 'num' : 'preview'} data-testid="feedback-row-value">
                          {value === undefined ? '—' : compactValue(value)}
                        </td>
                      )}
                      <td data-testid="feedback-row-user">{f.wb_user_id ?? '—'}</td>
                      <td data-testid="feedback-row-on">
                        <CallCell weaveRef={f.weave_ref} project={project} calls={calls} />
                      </td>
                      <td>
                        <button
                          type="button"
                          class="link preview"
                          aria-expanded={open}
                          title={open ? 'Hide the payload' : 'Show the whole payload'}
                          onClick={() => setExpanded(open ? undefined : f.id)}
                          data-testid="feedback-row-payload"
                        >
                          {compactValue(f.payload, 60)}
                        </button>
                      </td>
                    </tr>,
                    open && (
                      <tr key={`${f.id}-payload`} class="json-row">
                        <td colSpan={columns}>
                          <JsonViewer
                            value={f.payload}
                            label={`Payload of ${f.feedback_type} feedback from ${formatDate(f.created_at, zone)}`}
                            testId="json-feedback-payload"
                          />
                        </td>
                      </tr>
                    ),
                  ]
                })}
              </tbody>
            </table>
          </div>
        )
      )}
      <Pager offset={offset} size={FEEDBACK_PAGE_SIZE} {...pager} onPage={onPage} ids="feedback-rows" />
    </section>
  )
}
