import { useEffect, useMemo, useState } from 'preact/hooks'
import { Chart } from '../components/Chart'
import { Empty, ErrorBox, PageHeader, SendDataHint } from '../components/common'
import { FeedbackRows } from '../components/FeedbackRows'
import type { Api } from '../lib/api'
import { type FeedbackStats, feedbackSeries, feedbackWindow, metricSlug } from '../lib/charts'
import { formatNumber } from '../lib/format'
import { showRoute, useRouteView } from '../lib/navigate'
import {
  FEEDBACK_BUCKETS,
  FEEDBACK_PERCENTILES,
  type FeedbackView,
  feedbackViewParams,
  feedbackZones,
  parseFeedbackView,
  rangeHours,
  TIME_RANGES,
} from '../lib/page-views'
import { routeHash } from '../lib/route'
import { listedOr } from '../lib/view-query'

type PathInfo = { json_path: string; value_type: 'numeric' | 'boolean' | 'categorical' }

// A type's metrics with the first numeric one first: the default when the link names none of them.
function metricOrder(paths: PathInfo[]): string[] {
  const numeric = paths.find((p) => p.value_type === 'numeric')
  const names = paths.map((p) => p.json_path)
  return numeric === undefined ? names : [numeric.json_path, ...names.filter((n) => n !== numeric.json_path)]
}

const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone
const parseView = (params: URLSearchParams) => parseFeedbackView(params, BROWSER_ZONE)

/**
 * Feedback: a type and metric picked from `feedback/payload_schema`, charted by `feedback/stats` over time, and the
 * newest feedback of the type in the window below (`components/FeedbackRows.tsx`). The pickers and the table's page are
 * the route's query (`lib/page-views.ts`): each picker change is a new history entry, so Back returns to the previous
 * chart and a reload or a link shows the same one; paging replaces the entry, as on Traces.
 */
export function FeedbackPage({ api, project, params }: { api: Api; project: string; params: URLSearchParams }) {
  const view = useRouteView(params, parseView)
  const { range, bucket: granularity, zone: timezone, percentiles } = view
  const [types, setTypes] = useState<string[] | undefined>()
  const [paths, setPaths] = useState<PathInfo[] | undefined>()
  const [stats, setStats] = useState<FeedbackStats | undefined>()
  const [error, setError] = useState<unknown>()
  // The link's type and metric when the project has them, else the first type and its first numeric metric (the one
  // with an average and percentiles to chart), else its first metric.
  const type = listedOr(view.type, types ?? [])
  const path = listedOr(view.metric, metricOrder(paths ?? []))
  // The type and metric shown go into the link with any change, so it shows the same chart as the lists grow.
  const show = (change: Partial<FeedbackView>, entry: 'push' | 'replace' = 'push') =>
    showRoute(
      routeHash('feedback', [], feedbackViewParams({ ...view, type, metric: path, ...change }, BROWSER_ZONE)),
      entry,
    )

  // The window ends when each request is sent (not when the range was chosen), so asking again counts new feedback.
  const hours = rangeHours(range)

  // Feedback types of the project: the newest 1,000 rows' types.
  useEffect(() => {
    const abort = new AbortController()
    setError(undefined)
    api
      .post<{ result: { feedback_type: string }[] }>(
        'feedback/query',
        {
          project_id: project,
          fields: ['feedback_type'],
          sort_by: [{ field: 'created_at', direction: 'desc' }],
          limit: 1000,
        },
        abort.signal,
      )
      .then((r) => {
        setTypes([...new Set(r.result.map((f) => f.feedback_type))].sort())
      })
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project])

  useEffect(() => {
    if (type === '') return
    const abort = new AbortController()
    setPaths(undefined)
    setError(undefined)
    api
      .post<{ paths: PathInfo[] }>(
        'feedback/payload_schema',
        { project_id: project, feedback_type: type, ...feedbackWindow(hours, new Date()) },
        abort.signal,
      )
      .then((r) => setPaths(r.paths))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, type, hours])

  const info = paths?.find((p) => p.json_path === path)
  useEffect(() => {
    if (info === undefined) {
      setStats(undefined)
      return
    }
    const abort = new AbortController()
    setError(undefined)
    const metric =
      info.value_type === 'numeric'
        ? {
            json_path: info.json_path,
            value_type: 'numeric',
            aggregations: ['avg', 'min', 'max', 'count'],
            percentiles,
          }
        : info.value_type === 'boolean'
          ? { json_path: info.json_path, value_type: 'boolean', aggregations: ['count_true', 'count_false', 'count'] }
          : { json_path: info.json_path, value_type: 'categorical', aggregations: ['count'] }
    api
      .post<FeedbackStats>(
        'feedback/stats',
        {
          project_id: project,
          feedback_type: type,
          ...feedbackWindow(hours, new Date()),
          ...(granularity > 0 ? { granularity } : {}),
          timezone,
          metrics: [metric],
        },
        abort.signal,
      )
      .then(setStats)
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, type, info, hours, granularity, timezone, percentiles])

  const chart = useMemo(
    () =>
      stats === undefined || info === undefined ? undefined : feedbackSeries(stats, info.json_path, info.value_type),
    [stats, info],
  )
  const totals = info === undefined ? undefined : stats?.window_stats?.[metricSlug(info.json_path)]

  return (
    <div data-testid="page-feedback">
      <PageHeader title="Feedback" />
      <ErrorBox error={error} testId="feedback-error" />
      {types !== undefined && types.length === 0 ? (
        <Empty testId="feedback-empty">
          <p>
            No feedback in {project} yet. Add some with the Weave Python SDK (`call.feedback.add("rating", {'{'}"score":
            1{'}'})`) or the API's `POST /feedback/create`, with the settings below:
          </p>
          <SendDataHint project={project} />
        </Empty>
      ) : (
        <>
          <form
            class="filters"
            aria-label="Feedback options"
            data-testid="feedback-filters"
            onSubmit={(e) => e.preventDefault()}
          >
            <label>
              Feedback type
              <select
                value={type}
                onChange={(e) => show({ type: e.currentTarget.value, metric: '', offset: 0 })}
                data-testid="feedback-type"
              >
                {(types ?? []).map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Metric
              <select
                value={path}
                onChange={(e) => show({ metric: e.currentTarget.value })}
                data-testid="feedback-metric"
              >
                {(paths ?? []).map((p) => (
                  <option key={p.json_path} value={p.json_path}>
                    {p.json_path} ({p.value_type})
                  </option>
                ))}
              </select>
            </label>
            <label>
              Range
              <select
                value={range}
                onChange={(e) => show({ range: e.currentTarget.value as typeof range, offset: 0 })}
                data-testid="feedback-range"
              >
                {TIME_RANGES.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Bucket
              <select
                value={String(granularity)}
                onChange={(e) => show({ bucket: Number(e.currentTarget.value) })}
                data-testid="feedback-bucket"
              >
                {FEEDBACK_BUCKETS.map((b) => (
                  <option key={b.seconds} value={String(b.seconds)}>
                    {b.label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Time zone
              <select
                value={timezone}
                onChange={(e) => show({ zone: e.currentTarget.value })}
                data-testid="feedback-timezone"
              >
                {feedbackZones(BROWSER_ZONE).map((z) => (
                  <option key={z} value={z}>
                    {z}
                  </option>
                ))}
              </select>
            </label>
            {info?.value_type === 'numeric' && (
              <fieldset class="inline" data-testid="feedback-percentiles">
                <legend>Percentiles</legend>
                {FEEDBACK_PERCENTILES.map((p) => (
                  <label class="check" key={p}>
                    <input
                      type="checkbox"
                      checked={percentiles.includes(p)}
                      onChange={(e) =>
                        show({
                          percentiles: e.currentTarget.checked
                            ? [...percentiles, p].sort((a, b) => a - b)
                            : percentiles.filter((x) => x !== p),
                        })
                      }
                    />
                    p{p}
                  </label>
                ))}
              </fieldset>
            )}
          </form>
          {paths !== undefined && paths.length === 0 && (
            <p class="muted" data-testid="feedback-no-metrics">
              Feedback of type {type} in this window has no numeric, boolean or text payload fields to chart.
            </p>
          )}
          <div class="chart-with-totals">
            {chart !== undefined && info !== undefined && (
              <Chart
                data={chart}
                xKind="time"
                timeZone={timezone}
                title={`${type}: ${info.json_path}${info.value_type === 'boolean' ? ' (share true)' : ''}`}
                testId="feedback-chart"
              />
            )}
            {totals !== undefined && stats !== undefined && (
              <section aria-label="Window totals" class="card" data-testid="feedback-totals">
                <h2>Window totals</h2>
                <p class="muted small">
                  Buckets of {formatNumber(stats.granularity)} s in {stats.timezone}
                </p>
                <dl class="facts">
                  {Object.entries(totals).map(([k, v]) => (
                    <>
                      <dt key={`${k}-t`}>{k}</dt>
                      <dd key={`${k}-d`} data-testid={`feedback-total-${k}`} title={String(v)}>
                        {formatNumber(v)}
                      </dd>
                    </>
                  ))}
                </dl>
              </section>
            )}
          </div>
          {type !== '' && (
            <FeedbackRows
              api={api}
              project={project}
              type={type}
              hours={hours}
              metric={info?.json_path}
              zone={timezone}
              offset={view.offset}
              onPage={(offset) => show({ offset }, 'replace')}
            />
          )}
        </>
      )}
    </div>
  )
}
