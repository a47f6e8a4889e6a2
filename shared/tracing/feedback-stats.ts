import { readFeedbackWindow } from '#shared/db/feedback-reads'
import { BadRequestError } from '#shared/errors/http-error'
import type { Aggregation, FeedbackMetricSpec, FeedbackStatsReq } from '#shared/schemas/feedback-stats'
import { isoInZone, pydanticUtc } from '#shared/tracing/datetime'
import { assertJsonPath, metricSlug } from '#shared/tracing/feedback-json-path'
import { assertTimeZone, bucketGrid, granularityFor, resolveWindow } from '#shared/tracing/feedback-window'
import { PyFloat } from '#shared/tracing/json-exact'
import { pyFloat } from '#shared/tracing/py-number'

const DEFAULT_AGGS: Record<FeedbackMetricSpec['value_type'], Aggregation[]> = {
  numeric: ['avg', 'min', 'max'],
  boolean: ['count_true', 'count_false'],
  categorical: ['count'],
}

type Metric = { spec: FeedbackMetricSpec; slug: string; path: string[]; aggs: Aggregation[]; pcts: number[] }

// Per metric, one slot per bucket plus a last slot for the whole window.
type Acc = {
  n: Float64Array
  sum: Float64Array
  min: Float64Array
  max: Float64Array
  t: Float64Array
  f: Float64Array
  values?: number[][]
}

// The newest reference model fills default aggregations whenever none are given, percentiles or not
// (`FeedbackMetricSpec._apply_default_aggregations`). Percentiles apply to numbers and booleans alike; a categorical
// one would be a ClickHouse type error there, so it is ignored here (docs/tracing.md, differences).
function prepare(spec: FeedbackMetricSpec): Metric {
  const aggs = spec.aggregations.length === 0 ? DEFAULT_AGGS[spec.value_type] : spec.aggregations
  return {
    spec,
    slug: metricSlug(spec.json_path),
    path: spec.json_path.split('.'),
    aggs,
    pcts: spec.value_type === 'categorical' ? [] : spec.percentiles,
  }
}

// The reference validates every metric's path while building the shared query context, then each metric's
// percentiles while listing its aggregations, so a bad path anywhere wins over a bad percentile.
function validateMetrics(specs: FeedbackMetricSpec[]): void {
  for (const spec of specs) assertJsonPath(spec.json_path)
  for (const spec of specs)
    for (const p of spec.percentiles)
      if (p < 0 || p > 100) throw new BadRequestError(`Percentile must be between 0 and 100, got ${pyFloat(p)}`)
}

function newAcc(slots: number, withValues: boolean): Acc {
  const acc: Acc = {
    n: new Float64Array(slots),
    sum: new Float64Array(slots),
    min: new Float64Array(slots).fill(Number.POSITIVE_INFINITY),
    max: new Float64Array(slots).fill(Number.NEGATIVE_INFINITY),
    t: new Float64Array(slots),
    f: new Float64Array(slots),
  }
  if (withValues) acc.values = Array.from({ length: slots }, () => [])
  return acc
}

// Extraction per value type (ClickHouse, docs/tracing.md §12.3): only JSON numbers are numeric, only true/false
// boolean, and a missing or non-string categorical value counts as ''.
function extract(payload: unknown, m: Metric): number | string | null {
  let v: unknown = payload
  for (const part of m.path) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      v = undefined
      break
    }
    v = (v as Record<string, unknown>)[part]
  }
  const type = m.spec.value_type
  if (type === 'numeric') return typeof v === 'number' && Number.isFinite(v) ? v : null
  if (type === 'boolean') return v === true ? 1 : v === false ? 0 : null
  return typeof v === 'string' ? v : ''
}

function add(acc: Acc, slot: number, v: number | string): void {
  acc.n[slot] = (acc.n[slot] as number) + 1
  if (typeof v !== 'number') return
  acc.sum[slot] = (acc.sum[slot] as number) + v
  if (v < (acc.min[slot] as number)) acc.min[slot] = v
  if (v > (acc.max[slot] as number)) acc.max[slot] = v
  if (v === 1) acc.t[slot] = (acc.t[slot] as number) + 1
  else if (v === 0) acc.f[slot] = (acc.f[slot] as number) + 1
  acc.values?.[slot]?.push(v)
}

// ClickHouse `quantile` interpolates linearly between neighbours (exact below its 8,192-value reservoir).
function quantile(values: number[], p: number): number | null {
  if (values.length === 0) return null
  const sorted = Float64Array.from(values).sort()
  const pos = (p / 100) * (sorted.length - 1)
  const lo = Math.floor(pos)
  const hi = Math.min(lo + 1, sorted.length - 1)
  const v = (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo)
  return Math.round(v * 1e6) / 1e6
}

function aggValue(m: Metric, acc: Acc, slot: number, agg: Aggregation, zeroFill: boolean): number | null {
  const n = acc.n[slot] as number
  const numeric = m.spec.value_type !== 'categorical'
  switch (agg) {
    case 'count':
      // `countOrNull` over the window: null when no value was extracted; the bucket query coalesces it to 0.
      return n > 0 ? n : zeroFill ? 0 : null
    case 'count_true':
      return acc.t[slot] as number
    case 'count_false':
      return acc.f[slot] as number
    case 'sum':
      return numeric && n > 0 ? (acc.sum[slot] as number) : zeroFill ? 0 : null
    case 'avg':
      return numeric && n > 0 ? (acc.sum[slot] as number) / n : zeroFill ? 0 : null
    case 'min':
      return numeric && n > 0 ? (acc.min[slot] as number) : null
    case 'max':
      return numeric && n > 0 ? (acc.max[slot] as number) : null
  }
}

const pctKey = (p: number) => `p${Number.isInteger(p) ? String(p) : pyFloat(p)}`

// The reference names window values by parsing each column alias back into (aggregation, slug), longest prefix
// first (`_parse_window_stat_col`); an alias it cannot parse (`p1e-05_x`) is dropped, and `count_true_x` of a
// slug `true_x` reads as `count_true` of `x`.
const WINDOW_PREFIXES = ['count_true', 'count_false', 'avg', 'sum', 'min', 'max', 'count']

function parseWindowAlias(alias: string): [string, string] | null {
  for (const prefix of WINDOW_PREFIXES)
    if (alias.startsWith(`${prefix}_`)) return [prefix, alias.slice(prefix.length + 1)]
  const idx = alias.indexOf('_')
  if (idx > 0 && alias[0] === 'p' && /^\d+$/.test(alias.slice(1, idx).replaceAll('.', ''))) {
    return [alias.slice(0, idx), alias.slice(idx + 1)]
  }
  return null
}

/** `feedback/stats` (docs/tracing.md §12): one Query over the window's index range, aggregated in a single pass. */
export async function feedbackStats(req: FeedbackStatsReq) {
  const { startMs, endMs } = resolveWindow(req)
  assertTimeZone(req.timezone)
  if (req.metrics.length === 0) {
    return {
      start: pydanticUtc(startMs),
      end: pydanticUtc(endMs),
      granularity: 3600,
      timezone: req.timezone,
      buckets: [],
      window_stats: null,
    }
  }
  validateMetrics(req.metrics)
  const metrics = req.metrics.map(prepare)
  const g = granularityFor((endMs - startMs) / 1000, req.granularity)
  const grid = bucketGrid(startMs, endMs, g)
  const slots = grid.length + 1
  const win = grid.length
  const first = grid[0] ?? startMs
  const gMs = g * 1000
  const rows = new Float64Array(slots)
  const accs = metrics.map((m) => newAcc(slots, m.pcts.length > 0))
  const pages = readFeedbackWindow({
    project: req.project_id,
    startIso: new Date(startMs).toISOString(),
    endIso: new Date(endMs).toISOString(),
    feedbackType: req.feedback_type,
    triggerRef: req.trigger_ref,
  })
  for await (const page of pages) {
    for (const row of page) {
      const slot = Math.floor((Date.parse(row.created_at) - first) / gMs)
      if (slot < 0 || slot >= win) continue
      rows[slot] = (rows[slot] as number) + 1
      rows[win] = (rows[win] as number) + 1
      const payload = JSON.parse(row.payload) as unknown
      for (const [i, m] of metrics.entries()) {
        const v = extract(payload, m)
        if (v === null) continue
        add(accs[i] as Acc, slot, v)
        add(accs[i] as Acc, win, v)
      }
    }
  }
  const buckets = grid.map((ts, slot) => {
    const b: Record<string, string | number | null> = { timestamp: isoInZone(ts, req.timezone) }
    for (const [i, m] of metrics.entries()) {
      const acc = accs[i] as Acc
      for (const agg of m.aggs) b[`${agg}_${m.slug}`] = aggValue(m, acc, slot, agg, true)
      for (const p of m.pcts) b[`${pctKey(p)}_${m.slug}`] = quantile(acc.values?.[slot] ?? [], p)
    }
    b.count = rows[slot] as number
    return b
  })
  // Weave's `_extract_window_stats` answers `float(val)` (a count of 10 is `10.0`; null stays null): written exactly by
  // `jsonExactResponse`. Bucket values keep their ClickHouse column types there (`rows_to_bucket_dicts`), so stay as is.
  const windowStats: Record<string, Record<string, PyFloat | null>> = {}
  const put = (alias: string, value: number | null) => {
    const parsed = parseWindowAlias(alias)
    if (parsed === null) return
    const entry = windowStats[parsed[1]] ?? {}
    windowStats[parsed[1]] = entry
    entry[parsed[0]] = value === null ? null : new PyFloat(value)
  }
  for (const [i, m] of metrics.entries()) {
    const acc = accs[i] as Acc
    for (const agg of m.aggs) put(`${agg}_${m.slug}`, aggValue(m, acc, win, agg, false))
    for (const p of m.pcts) put(`${pctKey(p)}_${m.slug}`, quantile(acc.values?.[win] ?? [], p))
  }
  return {
    start: pydanticUtc(startMs),
    end: pydanticUtc(endMs),
    granularity: g,
    timezone: req.timezone,
    buckets,
    window_stats: windowStats,
  }
}
