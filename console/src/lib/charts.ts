// Shapes API answers into chart data: aligned x values (Unix seconds, or steps) and one y array per series, with
// null where a series has no value. uPlot draws exactly these arrays.

const HOUR_S = 3600

/** One line or area of a chart. */
export type Series = { label: string; values: (number | null)[] }
/** A chart's data: shared x values and the series over them. */
export type ChartData = { x: number[]; series: Series[] }

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
