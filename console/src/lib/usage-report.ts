// Shapes `GET /v1/usage` reports for the Usage page: the request for one project or an entity, the window of the
// last N hours, buckets summed per hour or UTC day and model or project for the table and the CSV, and the stacked
// chart's series.

// `.js` paths: the root tsconfig (NodeNext) checks this file too, through the unit tests that import it.
import { noUsage, roundUsd, USAGE_SUMS } from '../../../shared/inference/usage-sums.js'
import type { ChartData } from './charts.js'
import { formatDate } from './format.js'

/** A row of `GET /v1/usage` (`data[]`). */
export type UsageRow = {
  hour: string
  project: string
  model: string
  requests: number
  aborted_requests: number
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

/**
 * Usage measures the page can chart, show in its table and export: every count of a report row, and the cost (the
 * API's sums, in its order).
 */
export const USAGE_METRICS = USAGE_SUMS
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

/**
 * Sums usage rows per bucket (UTC hour or day) and model or project, ordered by bucket then key; costs rounded as
 * `GET /v1/usage` rounds them (`roundUsd`).
 */
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
      agg = { bucket, key, ...noUsage() }
      out.set(id, agg)
    }
    for (const m of USAGE_METRICS) agg[m] += row[m]
  }
  // Summed costs carry binary noise (`0.0009210000000000002`): rounded as the API rounds its rows and totals.
  for (const agg of out.values()) agg.cost_usd = roundUsd(agg.cost_usd)
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
