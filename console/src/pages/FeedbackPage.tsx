import { useEffect, useMemo, useState } from 'preact/hooks'
import { Chart } from '../components/Chart'
import { Empty, ErrorBox, PageHeader, SendDataHint } from '../components/common'
import type { Api } from '../lib/api'
import { type FeedbackStats, feedbackSeries, feedbackWindow, metricSlug } from '../lib/charts'
import { formatNumber } from '../lib/format'

type PathInfo = { json_path: string; value_type: 'numeric' | 'boolean' | 'categorical' }

const RANGES = [
  { id: '24h', label: 'Last 24 hours', hours: 24 },
  { id: '7d', label: 'Last 7 days', hours: 24 * 7 },
  { id: '30d', label: 'Last 30 days', hours: 24 * 30 },
] as const
const BUCKETS = [
  { seconds: 0, label: 'Automatic' },
  { seconds: 300, label: '5 minutes' },
  { seconds: 900, label: '15 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 21_600, label: '6 hours' },
  { seconds: 86_400, label: '1 day' },
] as const
const PERCENTILES = [50, 90, 95, 99] as const
const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone

function zones(): string[] {
  const list = [
    'UTC',
    BROWSER_ZONE,
    'America/New_York',
    'America/Los_Angeles',
    'Europe/London',
    'Europe/Berlin',
    'Asia/Tokyo',
  ]
  return [...new Set(list)]
}

/** Feedback: a type and metric picked from `feedback/payload_schema`, charted by `feedback/stats` over time. */
export function FeedbackPage({ api, project }: { api: Api; project: string }) {
  const [range, setRange] = useState<(typeof RANGES)[number]['id']>('7d')
  const [granularity, setGranularity] = useState(0)
  const [timezone, setTimezone] = useState(BROWSER_ZONE)
  const [types, setTypes] = useState<string[] | undefined>()
  const [type, setType] = useState('')
  const [paths, setPaths] = useState<PathInfo[] | undefined>()
  const [path, setPath] = useState('')
  const [percentiles, setPercentiles] = useState<number[]>([50, 95])
  const [stats, setStats] = useState<FeedbackStats | undefined>()
  const [error, setError] = useState<unknown>()

  // The window ends when each request is sent (not when the range was chosen), so asking again counts new feedback.
  const hours = RANGES.find((r) => r.id === range)?.hours ?? 24

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
        const found = [...new Set(r.result.map((f) => f.feedback_type))].sort()
        setTypes(found)
        setType((t) => (found.includes(t) ? t : (found[0] ?? '')))
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
      .then((r) => {
        setPaths(r.paths)
        setPath((p) => (r.paths.some((x) => x.json_path === p) ? p : (r.paths[0]?.json_path ?? '')))
      })
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
              <select value={type} onChange={(e) => setType(e.currentTarget.value)} data-testid="feedback-type">
                {(types ?? []).map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Metric
              <select value={path} onChange={(e) => setPath(e.currentTarget.value)} data-testid="feedback-metric">
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
                onChange={(e) => setRange(e.currentTarget.value as typeof range)}
                data-testid="feedback-range"
              >
                {RANGES.map((r) => (
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
                onChange={(e) => setGranularity(Number(e.currentTarget.value))}
                data-testid="feedback-bucket"
              >
                {BUCKETS.map((b) => (
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
                onChange={(e) => setTimezone(e.currentTarget.value)}
                data-testid="feedback-timezone"
              >
                {zones().map((z) => (
                  <option key={z} value={z}>
                    {z}
                  </option>
                ))}
              </select>
            </label>
            {info?.value_type === 'numeric' && (
              <fieldset class="inline" data-testid="feedback-percentiles">
                <legend>Percentiles</legend>
                {PERCENTILES.map((p) => (
                  <label class="check" key={p}>
                    <input
                      type="checkbox"
                      checked={percentiles.includes(p)}
                      onChange={(e) =>
                        setPercentiles(
                          e.currentTarget.checked
                            ? [...percentiles, p].sort((a, b) => a - b)
                            : percentiles.filter((x) => x !== p),
                        )
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
        </>
      )}
    </div>
  )
}
