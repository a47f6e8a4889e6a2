import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { Empty, ErrorBox, PageHeader, Pager, PastLastPage, SendDataHint } from '../components/common'
import { TracesFilters } from '../components/TracesFilters'
import type { Api } from '../lib/api'
import {
  CALL_COLUMNS,
  type Call,
  type CallColumn,
  callLatency,
  callName,
  callStatus,
  callsPageRequest,
  callsStatsRequest,
  pagerState,
  traceUsageRequest,
  USAGE_CALLS_CAP,
} from '../lib/calls'
import {
  browserTimeZone,
  formatCost,
  formatCount,
  formatDate,
  formatDuration,
  formatTokens,
  formatTotal,
  plural,
} from '../lib/format'
import { showRoute } from '../lib/navigate'
import { routeHash } from '../lib/route'
import { DEFAULT_VIEW, parseTracesView, type TracesSort, type TracesView, tracesViewParams } from '../lib/traces-view'
import { type PageUsage, pageUsage, rowUsage, usageCost, usageTokens } from '../lib/usage'

const PAGE_SIZE = 50
// The Started column is in the browser's time zone, named in its heading as the Usage table names its own.
const TIME_ZONE = browserTimeZone()

/** Reads every call of the rows' traces (ids, parents, summaries) and counts each row's tokens and cost. */
async function readPageUsage(api: Api, project: string, rows: Call[], signal: AbortSignal): Promise<PageUsage> {
  const traceIds = [...new Set(rows.map((r) => r.trace_id))]
  const calls: Call[] = []
  await api.stream<Call>('calls/stream_query', traceUsageRequest(project, traceIds), (b) => calls.push(...b), signal)
  return pageUsage(traceIds, calls, USAGE_CALLS_CAP)
}

// Tokens and cost are counted over whole traces, which the API cannot sort by: those two sort the loaded page.
function sortPage(calls: Call[], sort: TracesSort, usage: PageUsage | undefined): Call[] {
  const column = CALL_COLUMNS.find((c) => c.id === sort.column)
  if (column?.path !== null) return calls
  const measure = sort.column === 'tokens' ? usageTokens : usageCost
  const value = (call: Call) => {
    const u = rowUsage(usage, call)
    return u === undefined ? -1 : (measure(u) ?? -1)
  }
  const sign = sort.direction === 'asc' ? 1 : -1
  return [...calls].sort((a, b) => sign * (value(a) - value(b)))
}

function usageUnknown(usage: PageUsage | undefined, loading: boolean): string {
  return usage === undefined || loading
    ? 'Counting…'
    : `This trace has too many calls to count here (with the page's other traces, over ${formatCount(USAGE_CALLS_CAP)}): open it to see its tokens and cost.`
}

/**
 * Navigates to a view of the Traces page. A new filter (Apply, Reset) is a new history entry, so Back returns to the
 * previous filters; sorting and paging replace the entry, so Back leaves the list instead of stepping back through its
 * pages. Either way the entry a trace is opened from holds the list as shown, which Back from the trace restores.
 */
function showView(view: TracesView, entry: 'push' | 'replace'): void {
  showRoute(routeHash('traces', [], tracesViewParams(view)), entry)
}

/**
 * Traces: the project's calls, newest first, paged through `calls/stream_query` with the total from `query_stats`. The
 * filters, order and page are the route's query (`lib/traces-view.ts`), so a link or Back shows the same list.
 */
export function TracesPage({ api, project, params }: { api: Api; project: string; params: URLSearchParams }) {
  const query = params.toString()
  const view = useMemo(() => parseTracesView(params), [query])
  const { filters, sort, offset } = view
  const viewKey = JSON.stringify(view)
  const filtersKey = JSON.stringify(filters)
  // The form edits a draft of the applied filters; a route with other filters (Back, a link) fills it anew. Only a
  // change of route does: effects run after paint, so a mount's own run could wipe what was typed since the render.
  const [draft, setDraft] = useState(filters)
  const draftFor = useRef(filtersKey)
  useEffect(() => {
    if (draftFor.current === filtersKey) return
    draftFor.current = filtersKey
    setDraft(filters)
  }, [filtersKey])
  // Apply with the filters already shown reads the page again (new calls may have come in), without a new route.
  const [reload, setReload] = useState(0)
  const [calls, setCalls] = useState<Call[]>([])
  const [usage, setUsage] = useState<PageUsage>()
  // The selection (project and filters) whose page has been shown: its total is counted once, after its first page.
  const [shownSelection, setShownSelection] = useState<string>()
  // The total with the selection it counts: a total of other filters is never shown while the new one is counted.
  const [counted, setCounted] = useState<{ selection: string; stats: { count: number; has_more?: boolean } }>()
  // The view whose page has been read: another one is loading from the render that shows it, not from its effect (run
  // after paint), so the table never reads as settled with the previous view's rows under the new view's range.
  const [loaded, setLoaded] = useState<string>()
  const [error, setError] = useState<unknown>()
  const selection = JSON.stringify(callsStatsRequest(project, filters))
  const pageKey = `${project} ${viewKey} ${reload}`
  const loading = loaded !== pageKey

  // A page: its rows, then the tokens and cost of their traces. Paging and sorting run this again, never the count.
  useEffect(() => {
    const abort = new AbortController()
    const pageSelection = JSON.stringify(callsStatsRequest(project, filters))
    setCalls([])
    setUsage(undefined)
    setError(undefined)
    const rows: Call[] = []
    const fail = (err: unknown) => abort.signal.aborted || setError(err)
    api
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
        if (!abort.signal.aborted) setLoaded(pageKey)
      })
      .then(async () => {
        if (rows.length > 0) await readPageUsage(api, project, rows, abort.signal).then(setUsage, fail)
        if (!abort.signal.aborted) setShownSelection(pageSelection)
      })
      .catch(fail)
    return () => abort.abort()
  }, [api, project, viewKey, reload])

  // The total, once per selection: asked for after the selection's first page and its usage are in, since counting a
  // filtered selection reads every match and on a large project would otherwise compete with the page's own requests
  // for the server. Next, Previous and the sort headers change the page, not what is counted.
  const pageShown = shownSelection === selection
  const countedAlready = counted?.selection === selection
  useEffect(() => {
    if (!pageShown || countedAlready) return
    const abort = new AbortController()
    api
      .post<{ count: number; has_more?: boolean }>('calls/query_stats', JSON.parse(selection), abort.signal)
      .then((stats) => setCounted({ selection, stats }))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, selection, pageShown, countedAlready])

  function apply() {
    const next = { ...view, filters: { ...draft }, offset: 0 }
    if (JSON.stringify(next) === viewKey) setReload((n) => n + 1)
    showView(next, 'push')
  }
  function reset() {
    setDraft(DEFAULT_VIEW.filters)
    showView({ ...view, filters: DEFAULT_VIEW.filters, offset: 0 }, 'push')
  }
  function sortBy(column: CallColumn) {
    const direction = sort.column === column && sort.direction === 'desc' ? 'asc' : 'desc'
    showView({ ...view, sort: { column, direction }, offset: 0 }, 'replace')
  }
  const page = (to: number) => showView({ ...view, offset: Math.max(0, to) }, 'replace')

  const total = countedAlready ? counted?.stats : undefined
  const pager = pagerState(offset, calls.length, PAGE_SIZE, total)
  const noun = filters.rootsOnly ? 'trace' : 'call'
  let totalLabel = error === undefined ? 'counting…' : ''
  if (total !== undefined) totalLabel = `${formatTotal(total)} ${plural(total.count, noun)}`
  const shown = sortPage(calls, sort, usage)
  const filtered = filtersKey !== JSON.stringify(DEFAULT_VIEW.filters)
  const pageSorted = CALL_COLUMNS.find((c) => c.id === sort.column)?.path === null
  return (
    <div data-testid="page-traces">
      <PageHeader title="Traces">
        <span class="muted" data-testid="traces-total">
          {totalLabel}
        </span>
      </PageHeader>
      <TracesFilters
        draft={draft}
        onChange={(change) => setDraft((d) => ({ ...d, ...change }))}
        onApply={apply}
        onReset={reset}
      />
      <ErrorBox error={error} testId="traces-error" />
      {!loading && error === undefined && calls.length === 0 ? (
        <Empty testId="traces-empty">
          {offset > 0 ? (
            // A link made before rows went away (or typed) starts past the last row: a page, not a filter, is empty.
            <PastLastPage
              text={`No ${plural(0, noun)} on this page: ${total === undefined ? 'the list ends before it' : `the list has ${totalLabel}`}.`}
              onFirst={() => page(0)}
              testId="traces-first-page"
            />
          ) : filtered ? (
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
                      {c.id === 'started' ? `${c.label} (${TIME_ZONE})` : c.label}
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
                const counted = rowUsage(usage, call)
                const unknown = counted === undefined ? usageUnknown(usage, loading) : undefined
                return (
                  <tr key={call.id} data-testid="traces-row" data-call-id={call.id}>
                    <td class="op-name" title={callName(call)} data-testid="traces-op">
                      <a href={routeHash('trace', [call.trace_id], { call: call.id })} data-testid="traces-open">
                        {callName(call)}
                      </a>
                    </td>
                    <td>
                      <span class={`status status-${status}`} data-testid="traces-status">
                        {status}
                      </span>
                    </td>
                    <td class="date" data-testid="traces-started">
                      {formatDate(call.started_at)}
                    </td>
                    <td class="num" data-testid="traces-latency">
                      {formatDuration(callLatency(call))}
                    </td>
                    <td class="num" data-testid="traces-tokens" title={unknown}>
                      {counted === undefined ? '…' : formatTokens(usageTokens(counted))}
                    </td>
                    <td class="num" data-testid="traces-cost" title={unknown ?? String(usageCost(counted) ?? '')}>
                      {counted === undefined ? '…' : formatCost(usageCost(counted))}
                    </td>
                    <td class="one-line" data-testid="traces-user">
                      {call.wb_user_id ?? '—'}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted small" data-testid="traces-usage-note">
        Tokens and cost count each LLM request of a call and the calls below it once, as the trace view does.
        {pageSorted && ' They sort the calls of this page.'}
      </p>
      <Pager
        offset={offset}
        size={PAGE_SIZE}
        {...pager}
        onPage={page}
        ids={{ bar: 'traces-pager', prev: 'page-prev', range: 'page-range', next: 'page-next' }}
      />
    </div>
  )
}
