import { useEffect, useMemo, useState } from 'preact/hooks'
import { Chart } from '../components/Chart'
import { Empty, ErrorBox, PageHeader, SendDataHint } from '../components/common'
import type { Api } from '../lib/api'
import { toCsv } from '../lib/csv'
import { browserTimeZone, formatCost, formatCount } from '../lib/format'
import { showRoute, useRouteView } from '../lib/navigate'
import { parseUsageView, rangeHours, TIME_RANGES, type UsageView, usageViewParams } from '../lib/page-views'
import { routeHash } from '../lib/route'
import {
  aggregateUsage,
  USAGE_METRICS,
  type UsageMetric,
  type UsageRow,
  usageRange,
  usageReportRequest,
  usageSeries,
  usageTimeColumn,
  usageTimeLabel,
  usageTimeZone,
} from '../lib/usage-report'

type UsageReport = {
  entity: string
  project: string | null
  start: string
  end: string
  data: UsageRow[]
  total: { requests: number; prompt_tokens: number; completion_tokens: number; total_tokens: number; cost_usd: number }
}

const METRIC_LABELS: Record<UsageMetric, string> = {
  requests: 'Requests',
  aborted_requests: 'Aborted requests',
  prompt_tokens: 'Prompt tokens',
  completion_tokens: 'Completion tokens',
  cached_tokens: 'Cached tokens',
  total_tokens: 'Total tokens',
  cost_usd: 'Cost (USD)',
}

// Hourly rows are shown in the browser's time zone, named in the column heading (the CSV's hours are UTC).
const TIME_ZONE = browserTimeZone()

/** Starts a download of `text` as a file, through a Blob URL (no data leaves the browser). */
function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

/**
 * Usage: metered gateway usage from `GET /v1/usage`, over time, stacked by model or project, with table and CSV. The
 * pickers are the route's query (`lib/page-views.ts`): each change is a new history entry.
 */
export function UsagePage({ api, project, params }: { api: Api; project: string; params: URLSearchParams }) {
  const view = useRouteView(params, parseUsageView)
  const { range, resolution, groupBy, scope, metric } = view
  const show = (change: Partial<UsageView>) =>
    showRoute(routeHash('usage', [], usageViewParams({ ...view, ...change })), 'push')
  const [report, setReport] = useState<UsageReport | undefined>()
  const [error, setError] = useState<unknown>()

  useEffect(() => {
    const abort = new AbortController()
    const { start, end } = usageRange(rangeHours(range), new Date())
    setError(undefined)
    setReport(undefined)
    const { query, headers } = usageReportRequest(project, scope, start, end)
    const entity = project.split('/')[0]
    api
      .get<UsageReport>('v1/usage', query, abort.signal, headers)
      .then((r) => {
        // Never another entity's figures under this project's name.
        if (r.entity !== entity) throw new Error(`The usage report is for entity ${r.entity}, not ${entity}.`)
        setReport(r)
      })
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, range, scope])

  const chart = useMemo(() => {
    if (report === undefined) return undefined
    return usageSeries(report.data, {
      metric,
      groupBy,
      resolution,
      start: Math.floor(Date.parse(report.start) / 1000),
      end: Date.parse(report.end) / 1000,
    })
  }, [report, metric, groupBy, resolution])
  const table = useMemo(
    () => (report === undefined ? [] : aggregateUsage(report.data, groupBy, resolution)),
    [report, groupBy, resolution],
  )
  const timeLabel = useMemo(() => (seconds: number) => usageTimeLabel(seconds, resolution, TIME_ZONE), [resolution])
  const chartZone = usageTimeZone(resolution, TIME_ZONE)

  function exportCsv() {
    const columns = [resolution === 'hour' ? 'hour_utc' : 'day_utc', groupBy, ...USAGE_METRICS]
    const rows = table.map((r) => [new Date(r.bucket * 1000).toISOString(), r.key, ...USAGE_METRICS.map((m) => r[m])])
    download(`loom-usage-${range}-${resolution}-by-${groupBy}.csv`, toCsv(columns, rows), 'text/csv')
  }

  return (
    <div data-testid="page-usage">
      <PageHeader title="Usage" />
      <form class="filters" aria-label="Usage options" data-testid="usage-filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Range
          <select
            value={range}
            onChange={(e) => show({ range: e.currentTarget.value as typeof range })}
            data-testid="usage-range"
          >
            {TIME_RANGES.map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Buckets
          <select
            value={resolution}
            onChange={(e) => show({ resolution: e.currentTarget.value as 'hour' | 'day' })}
            data-testid="usage-resolution"
          >
            <option value="hour">Hourly</option>
            <option value="day">Daily (UTC)</option>
          </select>
        </label>
        <label>
          Projects
          <select
            value={scope}
            onChange={(e) => show({ scope: e.currentTarget.value as 'project' | 'entity' })}
            data-testid="usage-scope"
          >
            <option value="project">{project}</option>
            <option value="entity">Every project of {project.split('/')[0]}</option>
          </select>
        </label>
        <label>
          Stack by
          <select
            value={groupBy}
            onChange={(e) => show({ groupBy: e.currentTarget.value as 'model' | 'project' })}
            data-testid="usage-group"
          >
            <option value="model">Model</option>
            <option value="project">Project</option>
          </select>
        </label>
        <label>
          Measure
          <select
            value={metric}
            onChange={(e) => show({ metric: e.currentTarget.value as UsageMetric })}
            data-testid="usage-metric"
          >
            {USAGE_METRICS.map((m) => (
              <option key={m} value={m}>
                {METRIC_LABELS[m]}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={exportCsv} disabled={table.length === 0} data-testid="usage-csv">
          Download CSV
        </button>
      </form>
      <ErrorBox error={error} testId="usage-error" />
      {report !== undefined && (
        <dl class="totals" data-testid="usage-totals">
          <div>
            <dt>Requests</dt>
            <dd data-testid="usage-total-requests">{formatCount(report.total.requests)}</dd>
          </div>
          <div>
            <dt>Prompt tokens</dt>
            <dd data-testid="usage-total-prompt">{formatCount(report.total.prompt_tokens)}</dd>
          </div>
          <div>
            <dt>Completion tokens</dt>
            <dd data-testid="usage-total-completion">{formatCount(report.total.completion_tokens)}</dd>
          </div>
          <div>
            <dt>Total tokens</dt>
            <dd data-testid="usage-total-tokens">{formatCount(report.total.total_tokens)}</dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd data-testid="usage-total-cost" title={String(report.total.cost_usd)}>
              {formatCost(report.total.cost_usd)}
            </dd>
          </div>
        </dl>
      )}
      {report !== undefined && (
        <p class="muted small" data-testid="usage-pricing">
          Costs here are the gateway's meter, priced from the model catalog. A trace's cost is priced from the project's
          cost table (Weave <code>cost/create</code>), so the two can differ.
        </p>
      )}
      {report !== undefined && report.data.length === 0 ? (
        <Empty testId="usage-empty">
          <p>No metered usage in this range. Usage is counted for chat completions through Loom's /v1 API:</p>
          <SendDataHint project={project} />
        </Empty>
      ) : (
        chart !== undefined && (
          <>
            <Chart
              data={chart}
              xKind="time"
              stacked
              title={`${METRIC_LABELS[metric]} by ${groupBy}, ${resolution === 'hour' ? 'hourly' : 'daily'} (${chartZone})`}
              timeZone={chartZone}
              timeLabel={timeLabel}
              testId="usage-chart"
            />
            <div class="table-wrap">
              <table data-testid="usage-table">
                <thead>
                  <tr>
                    <th scope="col" data-testid="usage-time-column">
                      {usageTimeColumn(resolution, TIME_ZONE)}
                    </th>
                    <th scope="col">{groupBy === 'model' ? 'Model' : 'Project'}</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Aborted</th>
                    <th scope="col">Prompt</th>
                    <th scope="col">Completion</th>
                    <th scope="col">Cached</th>
                    <th scope="col">Total tokens</th>
                    <th scope="col">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {table.map((r) => (
                    <tr key={`${r.bucket}-${r.key}`} data-testid="usage-row">
                      <td>{timeLabel(r.bucket)}</td>
                      <td>{r.key}</td>
                      <td class="num">{formatCount(r.requests)}</td>
                      <td class="num">{formatCount(r.aborted_requests)}</td>
                      <td class="num">{formatCount(r.prompt_tokens)}</td>
                      <td class="num">{formatCount(r.completion_tokens)}</td>
                      <td class="num">{formatCount(r.cached_tokens)}</td>
                      <td class="num">{formatCount(r.total_tokens)}</td>
                      <td class="num" title={String(r.cost_usd)}>
                        {formatCost(r.cost_usd)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )
      )}
    </div>
  )
}
