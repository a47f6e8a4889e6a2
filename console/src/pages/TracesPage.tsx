import { useEffect, useState } from 'preact/hooks'
import { Empty, ErrorBox, PageHeader, SendDataHint } from '../components/common'
import type { Api } from '../lib/api'
import {
  CALL_COLUMNS,
  type Call,
  type CallColumn,
  type CallFilters,
  callCost,
  callLatency,
  callName,
  callStatus,
  callsPageRequest,
  callsStatsRequest,
  callTokens,
  pagerState,
} from '../lib/calls'
import { formatCost, formatDate, formatDuration, formatTokens, formatTotal, plural } from '../lib/format'
import { routeHash } from '../lib/route'

const PAGE_SIZE = 50
const NO_FILTERS: CallFilters = { op: '', status: '', from: '', to: '', text: '', rootsOnly: true }

type Sort = { column: CallColumn; direction: 'asc' | 'desc' }

// Tokens and cost are sums over per-model maps, which the API cannot sort by: those two sort the loaded page.
function sortPage(calls: Call[], sort: Sort): Call[] {
  const column = CALL_COLUMNS.find((c) => c.id === sort.column)
  if (column?.path !== null) return calls
  const value = sort.column === 'tokens' ? callTokens : callCost
  const sign = sort.direction === 'asc' ? 1 : -1
  return [...calls].sort((a, b) => sign * ((value(a) ?? -1) - (value(b) ?? -1)))
}

/** Traces: the project's calls, newest first, paged through `calls/stream_query` with the total from `query_stats`. */
export function TracesPage({ api, project }: { api: Api; project: string }) {
  const [draft, setDraft] = useState<CallFilters>(NO_FILTERS)
  const [filters, setFilters] = useState<CallFilters>(NO_FILTERS)
  const [sort, setSort] = useState<Sort>({ column: 'started', direction: 'desc' })
  const [offset, setOffset] = useState(0)
  const [calls, setCalls] = useState<Call[]>([])
  // The total with the selection it counts: a total of other filters is never shown while the new one is counted.
  const [counted, setCounted] = useState<{ selection: string; stats: { count: number; has_more?: boolean } }>()
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<unknown>()

  useEffect(() => {
    const abort = new AbortController()
    const selection = JSON.stringify(callsStatsRequest(project, filters))
    setCalls([])
    setError(undefined)
    setLoading(true)
    const rows: Call[] = []
    const page = api
      .stream<Call>(
        'calls/stream_query',
        callsPageRequest(project, filters, sort, { offset, limit: PAGE_SIZE }),
        (batch) => {
          rows.push(...batch)
          setCalls([...rows])
        },
        abort.signal,
      )
      .finally(() => {
        if (!abort.signal.aborted) setLoading(false)
      })
    // The total is asked for once the page is in: counting a filtered selection reads every match, and on a large
    // project it would otherwise compete with the page's own request for the server.
    const stats = page
      .then(() =>
        api.post<{ count: number; has_more?: boolean }>(
          'calls/query_stats',
          callsStatsRequest(project, filters),
          abort.signal,
        ),
      )
      .then((stats) => setCounted({ selection, stats }))
    Promise.all([page, stats]).catch((err) => {
      if (!abort.signal.aborted) setError(err)
    })
    return () => abort.abort()
  }, [api, project, filters, sort, offset])

  function apply(e: Event) {
    e.preventDefault()
    setOffset(0)
    setFilters({ ...draft })
  }
  function reset() {
    setDraft(NO_FILTERS)
    setOffset(0)
    setFilters(NO_FILTERS)
  }
  function sortBy(column: CallColumn) {
    setOffset(0)
    setSort((s) => ({ column, direction: s.column === column && s.direction === 'desc' ? 'asc' : 'desc' }))
  }

  const total = counted?.selection === JSON.stringify(callsStatsRequest(project, filters)) ? counted.stats : undefined
  const pager = pagerState(offset, calls.length, PAGE_SIZE, total)
  const noun = filters.rootsOnly ? 'trace' : 'call'
  let totalLabel = error === undefined ? 'counting…' : ''
  if (total !== undefined) totalLabel = `${formatTotal(total)} ${plural(total.count, noun)}`
  const shown = sortPage(calls, sort)
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS)
  const pageSorted = CALL_COLUMNS.find((c) => c.id === sort.column)?.path === null
  return (
    <div data-testid="page-traces">
      <PageHeader title="Traces">
        <span class="muted" data-testid="traces-total">
          {totalLabel}
        </span>
      </PageHeader>
      <form class="filters" onSubmit={apply} data-testid="traces-filters" aria-label="Filter calls">
        <label>
          Op name
          <input
            type="search"
            value={draft.op}
            onInput={(e) => setDraft({ ...draft, op: e.currentTarget.value })}
            data-testid="filter-op"
          />
        </label>
        <label>
          Status
          <select
            value={draft.status}
            onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value as CallFilters['status'] })}
            data-testid="filter-status"
          >
            <option value="">any</option>
            <option value="success">success</option>
            <option value="error">error</option>
            <option value="running">running</option>
          </select>
        </label>
        <label>
          From
          <input
            type="datetime-local"
            value={draft.from}
            onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })}
            data-testid="filter-from"
          />
        </label>
        <label>
          To
          <input
            type="datetime-local"
            value={draft.to}
            onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })}
            data-testid="filter-to"
          />
        </label>
        <label class="grow">
          Search
          <input
            type="search"
            placeholder="op name, display name, exception, text output"
            title="Case-insensitive text in the op name, display name or exception, or an output that is itself a string or number. Text inside input or output objects is not searched (the API's $contains reads a JSON object as empty, as Weave does)."
            value={draft.text}
            onInput={(e) => setDraft({ ...draft, text: e.currentTarget.value })}
            data-testid="filter-text"
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={draft.rootsOnly}
            onChange={(e) => setDraft({ ...draft, rootsOnly: e.currentTarget.checked })}
            data-testid="filter-roots"
          />
          Root calls only
        </label>
        <button type="submit" data-testid="filter-apply">
          Apply
        </button>
        <button type="button" class="secondary" onClick={reset} data-testid="filter-reset">
          Reset
        </button>
      </form>
      <ErrorBox error={error} testId="traces-error" />
      {!loading && error === undefined && calls.length === 0 ? (
        <Empty testId="traces-empty">
          {filtered || offset > 0 ? (
            <p>No calls match these filters.</p>
          ) : (
            <>
              <p>
                No calls in <strong>{project}</strong> yet.
              </p>
              <SendDataHint project={project} />
            </>
          )}
        </Empty>
      ) : (
        <div class="table-wrap">
          <table data-testid="traces-table" aria-busy={loading}>
            <caption class="sr-only">Calls of {project}</caption>
            <thead>
              <tr>
                {CALL_COLUMNS.map((c) => (
                  <th
                    key={c.id}
                    scope="col"
                    aria-sort={sort.column === c.id ? (sort.direction === 'asc' ? 'ascending' : 'descending') : 'none'}
                  >
                    <button type="button" class="sort" onClick={() => sortBy(c.id)} data-testid={`sort-${c.id}`}>
                      {c.label}
                      <span aria-hidden="true">
                        {sort.column === c.id ? (sort.direction === 'asc' ? ' ▲' : ' ▼') : ''}
                      </span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((call) => {
                const status = callStatus(call)
                return (
                  <tr key={call.id} data-testid="traces-row" data-call-id={call.id}>
                    <td>
                      <a href={routeHash('trace', [call.trace_id], { call: call.id })} data-testid="traces-open">
                        {callName(call)}
                      </a>
                    </td>
                    <td>
                      <span class={`status status-${status}`} data-testid="traces-status">
                        {status}
                      </span>
                    </td>
                    <td data-testid="traces-started">{formatDate(call.started_at)}</td>
                    <td class="num" data-testid="traces-latency">
                      {formatDuration(callLatency(call))}
                    </td>
                    <td class="num" data-testid="traces-tokens">
                      {formatTokens(callTokens(call))}
                    </td>
                    <td class="num" data-testid="traces-cost" title={String(callCost(call) ?? '')}>
                      {formatCost(callCost(call))}
                    </td>
                    <td data-testid="traces-user">{call.wb_user_id ?? '—'}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      {pageSorted && <p class="muted small">Tokens and cost sort the calls of this page.</p>}
      <div class="pager" data-testid="traces-pager">
        <button
          type="button"
          disabled={offset === 0}
          onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}
          data-testid="page-prev"
        >
          Previous
        </button>
        <span class="muted" data-testid="page-range">
          {pager.range}
        </span>
        <button
          type="button"
          disabled={!pager.hasNext}
          onClick={() => setOffset(offset + PAGE_SIZE)}
          data-testid="page-next"
        >
          Next
        </button>
      </div>
    </div>
  )
}
