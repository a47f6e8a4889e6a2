// Shapes API answers into chart data: aligned x values (Unix seconds, or steps) and one y array per series, with
// null where a series has no value. uPlot draws exactly these arrays.

// A `.js` path: the root tsconfig (NodeNext) checks this file too, through the unit tests that import it.
import { formatDate } from './format.js'

/** One line or area of a chart. */
export type Series = { label: string; values: (number | null)[] }
/** A chart's data: shared x values and the series over them. */
export type ChartData = { x: number[]; series: Series[] }

/** A row of `GET /v1/usage` (`data[]`). */
export type UsageRow = {
  hour: string
  project: string
  model: string
  requests: number
  aborted_requests?: number
  prompt_tokens: number
  completion_tokens: number
  cached_tokens: number
  total_tokens: number
  cost_usd: number
}

/**
 * The query and headers of `GET /v1/usage` for one project or every project of its entity. Without `project` the API
 * reports the entity of the `OpenAI-Project` header, else the key's own entity (shared/inference/usage-report.ts), which
 * need not be the open project's: a key of entity `acme` that is a member of `local` would see acme's usage under
 * local's name. So the entity-wide report names the open project in the header, and the API checks the key may read it.
 */
export function usageReportRequest(
  project: string,
  scope: 'project' | 'entity',
  start: Date,
  end: Date,
): { query: Record<string, string>; headers: Record<string, string> } {
  const span = { start: start.toISOString(), end: end.toISOString() }
  return scope === 'project'
    ? { query: { project, ...span }, headers: {} }
    : { query: span, headers: { 'OpenAI-Project': project } }
}

const HOUR_S = 3600
const DAY_S = 86_400

/**
 * The window of a "last `hours` hours" usage report: the `hours` hour buckets ending with the one in progress at `now`.
 * `GET /v1/usage` rounds `start` down to its hour and reads `end` as exclusive (docs/inference.md §12), so `now − hours`
 * would add a bucket (25 for a day); `start` is therefore on the hour, `hours` hours before the next one.
 */
export function usageRange(hours: number, now: Date): { start: Date; end: Date } {
  const next = Math.ceil(now.getTime() / (HOUR_S * 1000)) * HOUR_S * 1000
  return { start: new Date(next - hours * HOUR_S * 1000), end: now }
}

/** Usage measures the page can chart. */
export const USAGE_METRICS = [
  'requests',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'total_tokens',
  'cost_usd',
] as const
export type UsageMetric = (typeof USAGE_METRICS)[number]

/**
 * The heading of the usage table's time column, naming the zone its times are in: hours are shown in `timeZone` (the
 * browser's), days are UTC days (the CSV's columns are `hour_utc` and `day_utc`).
 */
export function usageTimeColumn(resolution: 'hour' | 'day', timeZone: string): string {
  return resolution === 'hour' ? `Hour (${timeZone})` : 'Day (UTC)'
}

/**
 * The time zone usage buckets are shown in, on the chart and in the table alike: hours in the browser's `timeZone`
 * (an hour is the same instant everywhere), days in UTC, since a day bucket is a UTC day: shown in a zone behind UTC,
 * the 2026-11-28 bucket would read as 2026-11-27 4:00pm.
 */
export function usageTimeZone(resolution: 'hour' | 'day', timeZone: string): string {
  return resolution === 'hour' ? timeZone : 'UTC'
}

/**
 * A usage bucket (Unix seconds) as the table and the chart's legend show it: an hour as `YYYY-MM-DD HH:MM:SS` in the
 * browser's `timeZone`, a day as its UTC date `YYYY-MM-DD`.
 */
export function usageTimeLabel(seconds: number, resolution: 'hour' | 'day', timeZone: string): string {
  return resolution === 'hour'
    ? formatDate(seconds * 1000, timeZone)
    : formatDate(seconds * 1000, usageTimeZone(resolution, timeZone)).slice(0, 10)
}

/** The start of the UTC hour or day holding `seconds`. */
export function bucketStart(seconds: number, resolution: 'hour' | 'day'): number {
  const size = resolution === 'hour' ? HOUR_S : DAY_S
  return Math.floor(seconds / size) * size
}

/** A usage row's hour (`2025-01-01T13:00:00Z`) as Unix seconds. */
export function usageHourSeconds(hour: string): number {
  return Math.floor(Date.parse(hour) / 1000)
}

/** One table row of aggregated usage: a bucket and a model or project, with every measure summed. */
export type UsageTableRow = { bucket: number; key: string } & Record<UsageMetric, number>

/** Sums usage rows per bucket (UTC hour or day) and model or project, ordered by bucket then key. */
export function aggregateUsage(
  rows: readonly UsageRow[],
  groupBy: 'model' | 'project',
  resolution: 'hour' | 'day',
): UsageTableRow[] {
  const out = new Map<string, UsageTableRow>()
  for (const row of rows) {
    const bucket = bucketStart(usageHourSeconds(row.hour), resolution)
    const key = groupBy === 'model' ? row.model : row.project
    const id = `${bucket}\u0000${key}`
    let agg = out.get(id)
    if (agg === undefined) {
      agg = {
        bucket,
        key,
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cached_tokens: 0,
        total_tokens: 0,
        cost_usd: 0,
      }
      out.set(id, agg)
    }
    for (const m of USAGE_METRICS) agg[m] += row[m]
  }
  return [...out.values()].sort((a, b) => a.bucket - b.bucket || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

/**
 * Usage over time for a stacked chart: one series per model or project (largest total first), one x per bucket from
 * the one holding `start` to the one holding the last moment before `end` (a report's `end` is exclusive), empty
 * buckets as 0 so stacked areas stay continuous, values of one measure.
 */
export function usageSeries(
  rows: readonly UsageRow[],
  options: {
    metric: UsageMetric
    groupBy: 'model' | 'project'
    resolution: 'hour' | 'day'
    start: number
    end: number
  },
): ChartData {
  const size = options.resolution === 'hour' ? HOUR_S : DAY_S
  const first = bucketStart(options.start, options.resolution)
  const last = bucketStart(Math.ceil(options.end) - 1, options.resolution)
  const x: number[] = []
  for (let t = first; t <= last; t += size) x.push(t)
  const index = new Map(x.map((t, i) => [t, i]))
  const byKey = new Map<string, number[]>()
  const totals = new Map<string, number>()
  for (const row of aggregateUsage(rows, options.groupBy, options.resolution)) {
    const i = index.get(row.bucket)
    if (i === undefined) continue
    let values = byKey.get(row.key)
    if (values === undefined) {
      values = new Array<number>(x.length).fill(0)
      byKey.set(row.key, values)
    }
    values[i] = (values[i] as number) + row[options.metric]
    totals.set(row.key, (totals.get(row.key) ?? 0) + row[options.metric])
  }
  const keys = [...byKey.keys()].sort((a, b) => (totals.get(b) ?? 0) - (totals.get(a) ?? 0) || (a < b ? -1 : 1))
  return { x, series: keys.map((label) => ({ label, values: byKey.get(label) as number[] })) }
}

/**
 * Running sums of the series, bottom first: what a stacked area chart draws (series i's line is the sum of series
 * 0..i). Nulls count as 0.
 */
export function stack(series: readonly Series[]): Series[] {
  const out: Series[] = []
  let below: number[] | undefined
  for (const s of series) {
    const sums = s.values.map((v, i) => (below?.[i] ?? 0) + (v ?? 0))
    out.push({ label: s.label, values: sums })
    below = sums
  }
  return out
}

/** A `feedback/stats` answer (the fields the page uses). */
export type FeedbackStats = {
  granularity: number
  timezone: string
  buckets: Record<string, string | number | null>[]
  window_stats: Record<string, Record<string, number | null>> | null
}

/** The key slug `feedback/stats` gives a json_path (dots and spaces become underscores). */
export function metricSlug(jsonPath: string): string {
  return jsonPath.replace(/[. ]/g, '_')
}

/**
 * The window a feedback request asks for: the last `hours` ending at `now`. Each request computes it afresh, so a
 * window chosen a while ago still ends when the page asks again (and counts feedback created since).
 */
export function feedbackWindow(hours: number, now: Date): { start: string; end: string } {
  return { start: new Date(now.getTime() - hours * HOUR_S * 1000).toISOString(), end: now.toISOString() }
}

/**
 * Chart series of one metric from `feedback/stats` buckets: one series per statistic the answer holds for it
 * (`avg`, `min`, `max`, `p95`, …, `count`), and for booleans the share of true among true and false values
 * (`true rate`, null in a bucket without any). A bucket without values (count 0) is a gap in every statistic but the
 * count itself, whatever the API puts there (it answers `avg: 0` for an empty bucket).
 */
export function feedbackSeries(stats: FeedbackStats, jsonPath: string, valueType: string): ChartData {
  const slug = metricSlug(jsonPath)
  const suffix = `_${slug}`
  const x = stats.buckets.map((b) => Math.floor(Date.parse(String(b.timestamp)) / 1000))
  const first = stats.buckets[0] ?? {}
  const keys = Object.keys(first).filter((k) => k.endsWith(suffix))
  const countKey = `count${suffix}` in first ? `count${suffix}` : 'count'
  const empty = (b: Record<string, unknown>) => b[countKey] === 0
  if (valueType === 'boolean') {
    const rate = stats.buckets.map((b) => {
      const t = Number(b[`count_true${suffix}`] ?? 0)
      const f = Number(b[`count_false${suffix}`] ?? 0)
      return t + f === 0 ? null : t / (t + f)
    })
    return { x, series: [{ label: 'true rate', values: rate }] }
  }
  return {
    x,
    series: keys.map((k) => ({
      label: k.slice(0, -suffix.length),
      values: stats.buckets.map((b) =>
        typeof b[k] !== 'number' || (k !== countKey && empty(b)) ? null : (b[k] as number),
      ),
    })),
  }
}

/** One row of `GET /v1/preview/models/{id}/metrics` (`rows[]`). */
export type MetricsRow = { split: string; step: number; recorded_at: string; metrics: Record<string, number> }

/**
 * How many steps a model logged at: its distinct `step` values. The history has a row per log call (each of one split),
 * so a step logged for train and val, or logged twice, is one step; the row count is the number of logs.
 */
export function loggedSteps(rows: readonly MetricsRow[]): number {
  return new Set(rows.map((r) => r.step)).size
}

/**
 * Splits and metric names present in metrics rows, sorted with reward and exception rate first (the training log names
 * them `<split>/reward`, `<split>/exception_rate`).
 */
export function metricNames(rows: readonly MetricsRow[]): { splits: string[]; metrics: string[] } {
  const splits = new Set<string>()
  const metrics = new Set<string>()
  for (const row of rows) {
    splits.add(row.split)
    for (const k of Object.keys(row.metrics)) metrics.add(k)
  }
  const first = ['reward', 'exception_rate']
  const rank = (m: string) => {
    const leaf = m.slice(m.lastIndexOf('/') + 1)
    return first.includes(leaf) ? first.indexOf(leaf) : first.length
  }
  return {
    splits: [...splits].sort(),
    metrics: [...metrics].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)),
  }
}

/** The x axis of Training's charts: the step each log was made at, or the time it was logged. */
export type TrainingAxis = 'step' | 'time'

/**
 * Training's x axis when the link names none: the step, unless every log of the chosen models is at one step (as with
 * Loom, which does not train, so a model's step stays 0: docs/training.md §5.1), where only the time tells logs apart.
 */
export function defaultTrainingAxis(rows: readonly MetricsRow[]): TrainingAxis {
  return loggedSteps(rows) === 1 ? 'time' : 'step'
}

/**
 * One metric of one split for several models, every log a point: x is the step or the time logged (Unix seconds),
 * ascending. Logs at the same x (several at one step) are all kept, in logged order: the k-th log of each model at an x
 * shares that x's k-th entry, so x repeats as often as the model with the most logs there needs. A model has null
 * where it logged nothing.
 */
export function trainingSeries(
  models: readonly { label: string; rows: readonly MetricsRow[] }[],
  split: string,
  metric: string,
  axis: TrainingAxis = 'step',
): ChartData {
  const xOf = (row: MetricsRow) => (axis === 'step' ? row.step : Date.parse(row.recorded_at) / 1000)
  const perModel = models.map((m) => {
    const logged = m.rows
      .filter((row) => row.split === split && typeof row.metrics[metric] === 'number')
      .sort((a, b) => (a.recorded_at < b.recorded_at ? -1 : a.recorded_at > b.recorded_at ? 1 : 0))
    const atX = new Map<number, number[]>()
    for (const row of logged) {
      const x = xOf(row)
      atX.set(x, [...(atX.get(x) ?? []), row.metrics[metric] as number])
    }
    return { label: m.label, atX }
  })
  const slots = new Map<number, number>()
  for (const { atX } of perModel)
    for (const [x, values] of atX) slots.set(x, Math.max(slots.get(x) ?? 0, values.length))
  const xs = [...slots.keys()].sort((a, b) => a - b)
  const spread = <T>(at: (x: number, k: number) => T) =>
    xs.flatMap((x) => Array.from({ length: slots.get(x) ?? 0 }, (_, k) => at(x, k)))
  return {
    x: spread((x) => x),
    series: perModel.map((m) => ({ label: m.label, values: spread((x, k) => m.atX.get(x)?.[k] ?? null) })),
  }
}
