// What the Feedback, Usage, Training and Objects pages show, as the query of their routes, so a reload, Back or a
// copied link shows the same charts and selection (the Traces page's is traces-view.ts). Each page's parameters:
//   Feedback  `#/<entity>/<project>/feedback?type=…&metric=…&range=…&bucket=…&tz=…&p=50,90&offset=25`
//   Usage     `#/<entity>/<project>/usage?range=…&res=day&scope=entity&group=project&metric=…`
//   Training  `#/<entity>/<project>/training?models=<id>,<id>&x=time` (`models=`: none ticked; no `x`: by the data)
//   Objects   `#/<entity>/<project>/objects/<object id>?digest=<version digest>&rows=50`
// Defaults are left out; a value the page cannot show reads as its default (view-query.ts).

// `.js` paths: the root tsconfig (NodeNext) checks this file too, through the unit tests that import it.
import type { TrainingAxis } from './charts.js'
import { USAGE_METRICS, type UsageMetric } from './usage-report.js'
import { changedParams, knownOf, listParam, offsetParam, oneOf } from './view-query.js'

/** The time ranges of Feedback and Usage: the last 24, 168 or 720 hours. */
export const TIME_RANGES = [
  { id: '24h', label: 'Last 24 hours', hours: 24 },
  { id: '7d', label: 'Last 7 days', hours: 24 * 7 },
  { id: '30d', label: 'Last 30 days', hours: 24 * 30 },
] as const
export type TimeRange = (typeof TIME_RANGES)[number]['id']
const RANGE_IDS = TIME_RANGES.map((r) => r.id)

/** The hours of a range. */
export function rangeHours(range: TimeRange): number {
  return TIME_RANGES.find((r) => r.id === range)?.hours ?? 24
}

/** Feedback's bucket sizes in seconds (0: the server picks). */
export const FEEDBACK_BUCKETS = [
  { seconds: 0, label: 'Automatic' },
  { seconds: 300, label: '5 minutes' },
  { seconds: 900, label: '15 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 21_600, label: '6 hours' },
  { seconds: 86_400, label: '1 day' },
] as const
const BUCKET_SECONDS: number[] = FEEDBACK_BUCKETS.map((b) => b.seconds)

/** The percentiles Feedback can chart for a numeric metric. */
export const FEEDBACK_PERCENTILES: readonly number[] = [50, 90, 95, 99]

/** The time zones Feedback offers: UTC, the browser's, and a few others. */
export function feedbackZones(browserZone: string): string[] {
  return [
    ...new Set([
      'UTC',
      browserZone,
      'America/New_York',
      'America/Los_Angeles',
      'Europe/London',
      'Europe/Berlin',
      'Asia/Tokyo',
    ]),
  ]
}

/**
 * Feedback's pickers; `type` and `metric` are checked against the lists the page loads (`''`: the first). `offset` is
 * the first row of the feedback table's page.
 */
export type FeedbackView = {
  type: string
  metric: string
  range: TimeRange
  bucket: number
  zone: string
  percentiles: number[]
  offset: number
}

/** The plain Feedback link's view: the first type and metric, 7 days, automatic buckets, the browser's zone. */
export function defaultFeedbackView(browserZone: string): FeedbackView {
  return { type: '', metric: '', range: '7d', bucket: 0, zone: browserZone, percentiles: [50, 95], offset: 0 }
}

/** The Feedback view a route's query names, in a browser of zone `browserZone`. */
export function parseFeedbackView(params: URLSearchParams, browserZone: string): FeedbackView {
  const plain = defaultFeedbackView(browserZone)
  return {
    type: params.get('type') ?? '',
    metric: params.get('metric') ?? '',
    range: oneOf(params.get('range'), RANGE_IDS, plain.range),
    bucket: oneOf(params.get('bucket'), BUCKET_SECONDS, plain.bucket),
    zone: oneOf(params.get('tz'), feedbackZones(browserZone), plain.zone),
    percentiles: knownOf(listParam(params.get('p')), FEEDBACK_PERCENTILES, plain.percentiles).sort((a, b) => a - b),
    offset: offsetParam(params.get('offset')),
  }
}

/** The query of a Feedback view, defaults left out. */
export function feedbackViewParams(view: FeedbackView, browserZone: string): Record<string, string> {
  const text = (v: FeedbackView) => ({
    type: v.type,
    metric: v.metric,
    range: v.range,
    bucket: String(v.bucket),
    tz: v.zone,
    p: v.percentiles.join(','),
    offset: String(v.offset),
  })
  return changedParams(text(view), text(defaultFeedbackView(browserZone)))
}

/** Usage's pickers. */
export type UsageView = {
  range: TimeRange
  resolution: 'hour' | 'day'
  scope: 'project' | 'entity'
  groupBy: 'model' | 'project'
  metric: UsageMetric
}

/** The plain Usage link's view: the last 24 hours of this project, hourly, total tokens by model. */
export const DEFAULT_USAGE_VIEW: UsageView = {
  range: '24h',
  resolution: 'hour',
  scope: 'project',
  groupBy: 'model',
  metric: 'total_tokens',
}

const usageText = (v: UsageView) => ({
  range: v.range,
  res: v.resolution,
  scope: v.scope,
  group: v.groupBy,
  metric: v.metric,
})

/** The Usage view a route's query names. */
export function parseUsageView(params: URLSearchParams): UsageView {
  const plain = DEFAULT_USAGE_VIEW
  return {
    range: oneOf(params.get('range'), RANGE_IDS, plain.range),
    resolution: oneOf(params.get('res'), ['hour', 'day'] as const, plain.resolution),
    scope: oneOf(params.get('scope'), ['project', 'entity'] as const, plain.scope),
    groupBy: oneOf(params.get('group'), ['model', 'project'] as const, plain.groupBy),
    metric: oneOf(params.get('metric'), USAGE_METRICS, plain.metric),
  }
}

/** The query of a Usage view, defaults left out. */
export function usageViewParams(view: UsageView): Record<string, string> {
  return changedParams(usageText(view), usageText(DEFAULT_USAGE_VIEW))
}

/**
 * The models Training compares: those the route's `models` names that the project lists, in the link's order; the
 * first listed model without the parameter or when it names none the project has; none for `models=`.
 */
export function chosenModels(params: URLSearchParams, listed: readonly string[]): string[] {
  return knownOf(listParam(params.get('models')), listed, listed.slice(0, 1))
}

/**
 * The x axis Training's link names (`x=step` or `x=time`), or undefined when it names none or another value: the page
 * then picks one from the data (`defaultTrainingAxis`).
 */
export function chosenAxis(params: URLSearchParams): TrainingAxis | undefined {
  return oneOf<TrainingAxis | ''>(params.get('x'), ['step', 'time'], '') || undefined
}

/**
 * The query of Training's chosen models (`{}` for the first listed model alone, the plain link's choice) and x axis
 * (left out when the page picks it).
 */
export function trainingParams(
  chosen: readonly string[],
  listed: readonly string[],
  axis?: TrainingAxis,
): Record<string, string> {
  return {
    ...changedParams({ models: chosen.join(',') }, { models: listed.slice(0, 1).join(',') }),
    ...(axis === undefined ? {} : { x: axis }),
  }
}

/** The version Objects shows: the route's `digest` when the object has it, else its latest version (else its newest). */
export function chosenVersion(
  params: URLSearchParams,
  versions: readonly { digest: string; is_latest: 0 | 1 }[],
): string | undefined {
  const wanted = params.get('digest')
  if (versions.some((v) => v.digest === wanted)) return wanted ?? undefined
  return versions.find((v) => v.is_latest === 1)?.digest ?? versions[0]?.digest
}

/**
 * The page of a Dataset's rows Objects shows: the first row of the rows table's page (`rows=50`), 0 when absent or not
 * a plain count.
 */
export function chosenRowsOffset(params: URLSearchParams): number {
  return offsetParam(params.get('rows'))
}

/**
 * The query of an object's view: the version `digest` (left out when undefined: the latest) and the rows table's first
 * row (left out at 0).
 * @example objectViewParams('d1', 50) // { digest: 'd1', rows: '50' }
 */
export function objectViewParams(digest: string | undefined, rows: number): Record<string, string> {
  return {
    ...(digest === undefined ? {} : { digest }),
    ...changedParams({ rows: String(rows) }, { rows: '0' }),
  }
}
