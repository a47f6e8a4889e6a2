import { describe, expect, it } from 'vitest'
import {
  aggregateUsage,
  bucketStart,
  defaultTrainingAxis,
  type FeedbackStats,
  feedbackSeries,
  feedbackWindow,
  loggedSteps,
  metricNames,
  metricSlug,
  stack,
  trainingSeries,
  type UsageRow,
  usageRange,
  usageReportRequest,
  usageSeries,
  usageTimeColumn,
  usageTimeLabel,
  usageTimeZone,
} from '../../console/src/lib/charts.js'

const row = (hour: string, model: string, project: string, requests: number, cost = 0): UsageRow => ({
  hour,
  project,
  model,
  requests,
  aborted_requests: 0,
  prompt_tokens: requests * 10,
  completion_tokens: requests * 5,
  cached_tokens: 0,
  total_tokens: requests * 15,
  cost_usd: cost,
})
const s = (iso: string) => Date.parse(iso) / 1000

describe('usage series', () => {
  const rows = [
    row('2025-01-01T00:00:00Z', 'big', 'e/p1', 5, 0.5),
    row('2025-01-01T00:00:00Z', 'small', 'e/p1', 1, 0.1),
    row('2025-01-01T02:00:00Z', 'big', 'e/p2', 3, 0.3),
    row('2025-01-02T05:00:00Z', 'small', 'e/p2', 2, 0.2),
  ]

  it('fills every hour of the range, empty hours as 0, largest series first', () => {
    // Act
    const data = usageSeries(rows, {
      metric: 'requests',
      groupBy: 'model',
      resolution: 'hour',
      start: s('2025-01-01T00:30:00Z'),
      end: s('2025-01-01T03:10:00Z'),
    })

    // Assess
    expect(data.x).toEqual([0, 1, 2, 3].map((h) => s(`2025-01-01T0${h}:00:00Z`)))
    expect(data.series).toEqual([
      { label: 'big', values: [5, 0, 3, 0] },
      { label: 'small', values: [1, 0, 0, 0] },
    ])
  })

  it('sums hours into UTC days and groups by project', () => {
    const data = usageSeries(rows, {
      metric: 'cost_usd',
      groupBy: 'project',
      resolution: 'day',
      start: s('2025-01-01T00:00:00Z'),
      end: s('2025-01-02T23:00:00Z'),
    })
    expect(data.x).toEqual([s('2025-01-01T00:00:00Z'), s('2025-01-02T00:00:00Z')])
    expect(data.series.map((x) => x.label)).toEqual(['e/p1', 'e/p2'])
    expect(data.series[0]?.values[0]).toBeCloseTo(0.6, 10)
    expect(data.series[1]?.values).toEqual([0.3, 0.2])
  })

  it('aggregates rows for the table, by bucket then key, every measure summed', () => {
    const table = aggregateUsage(rows, 'model', 'day')
    expect(table.map((r) => [r.bucket, r.key, r.requests, r.total_tokens])).toEqual([
      [s('2025-01-01T00:00:00Z'), 'big', 8, 120],
      [s('2025-01-01T00:00:00Z'), 'small', 1, 15],
      [s('2025-01-02T00:00:00Z'), 'small', 2, 30],
    ])
  })

  it('stacks series as running sums, nulls as 0', () => {
    expect(
      stack([
        { label: 'a', values: [1, 2, null] },
        { label: 'b', values: [3, null, 4] },
      ]),
    ).toEqual([
      { label: 'a', values: [1, 2, 0] },
      { label: 'b', values: [4, 2, 4] },
    ])
  })

  it("names the time zone of the table's time column: the browser's for hours, UTC for days", () => {
    expect(usageTimeColumn('hour', 'Europe/Berlin')).toBe('Hour (Europe/Berlin)')
    expect(usageTimeColumn('day', 'Europe/Berlin')).toBe('Day (UTC)')
  })

  it("labels a day bucket as its UTC date and an hour in the browser's zone, on the chart as in the table", () => {
    // Prepare: the 2026-11-28 (UTC) day bucket, seen from a zone behind UTC and one ahead of it
    const day = s('2026-11-28T00:00:00Z')

    // Assess: never the local time of the UTC midnight (2026-11-27 4:00pm in Los Angeles)
    expect(usageTimeZone('day', 'America/Los_Angeles')).toBe('UTC')
    expect(usageTimeLabel(day, 'day', 'America/Los_Angeles')).toBe('2026-11-28')
    expect(usageTimeLabel(day, 'day', 'Asia/Kolkata')).toBe('2026-11-28')
    expect(usageTimeZone('hour', 'America/Los_Angeles')).toBe('America/Los_Angeles')
    expect(usageTimeLabel(day, 'hour', 'America/Los_Angeles')).toBe('2026-11-27 16:00:00')
    expect(usageTimeLabel(day, 'hour', 'Asia/Kolkata')).toBe('2026-11-28 05:30:00')
  })

  it("asks for one project's usage by name, and for its entity's through the project header", () => {
    // Prepare
    const start = new Date('2026-11-27T00:00:00Z')
    const end = new Date('2026-11-28T00:00:00Z')
    const span = { start: '2026-11-27T00:00:00.000Z', end: '2026-11-28T00:00:00.000Z' }

    // Assess: without `project`, GET /v1/usage reports the header's entity (else the key's own, maybe another)
    expect(usageReportRequest('local/qa', 'project', start, end)).toEqual({
      query: { project: 'local/qa', ...span },
      headers: {},
    })
    expect(usageReportRequest('local/qa', 'entity', start, end)).toEqual({
      query: span,
      headers: { 'OpenAI-Project': 'local/qa' },
    })
  })

  it('finds the start of an hour or day', () => {
    expect(bucketStart(s('2025-01-01T05:59:59Z'), 'hour')).toBe(s('2025-01-01T05:00:00Z'))
    expect(bucketStart(s('2025-01-01T05:59:59Z'), 'day')).toBe(s('2025-01-01T00:00:00Z'))
  })

  it('asks for the last N hour buckets, the last one in progress, and draws exactly those', () => {
    // Prepare
    const now = new Date('2026-11-28T10:34:12.500Z')

    // Act: the page's "last 24 hours", and the report's window as the API echoes it (`end` exclusive)
    const { start, end } = usageRange(24, now)
    const data = usageSeries([row('2026-11-28T10:00:00Z', 'm', 'e/p', 1)], {
      metric: 'requests',
      groupBy: 'model',
      resolution: 'hour',
      start: start.getTime() / 1000,
      end: end.getTime() / 1000,
    })
    const onTheHour = usageSeries([], {
      metric: 'requests',
      groupBy: 'model',
      resolution: 'hour',
      start: s('2026-11-28T00:00:00Z'),
      end: s('2026-11-28T10:00:00Z'),
    })

    // Assess: 24 buckets from 11:00 the day before to the current 10:00; a window ending at 10:00 stops at 09:00
    expect([start.toISOString(), end]).toEqual(['2026-11-27T11:00:00.000Z', now])
    expect(data.x).toHaveLength(24)
    expect([data.x[0], data.x.at(-1)]).toEqual([s('2026-11-27T11:00:00Z'), s('2026-11-28T10:00:00Z')])
    expect(data.series[0]?.values.at(-1)).toBe(1)
    expect(onTheHour.x).toHaveLength(10)
    expect(usageRange(24, new Date('2026-11-28T10:00:00Z')).start.toISOString()).toBe('2026-11-27T10:00:00.000Z')
  })

  it('shapes a 30-day hourly report of 10 models into 720 points per series', () => {
    // Prepare
    const start = s('2025-01-01T00:00:00Z')
    const many: UsageRow[] = []
    for (let h = 0; h < 720; h++)
      for (let m = 0; m < 10; m++)
        many.push(row(new Date((start + h * 3600) * 1000).toISOString(), `m${m}`, 'e/p', m + 1))

    // Act
    const data = usageSeries(many, {
      metric: 'requests',
      groupBy: 'model',
      resolution: 'hour',
      start,
      end: start + 720 * 3600,
    })

    // Assess
    expect(data.series).toHaveLength(10)
    expect(data.x).toHaveLength(720)
    expect(data.series[0]?.label).toBe('m9')
    expect(data.series[0]?.values.every((v) => v === 10)).toBe(true)
  })
})

describe('feedback series', () => {
  const stats: FeedbackStats = {
    granularity: 3600,
    timezone: 'UTC',
    buckets: [
      {
        timestamp: '2025-01-01T00:00:00+00:00',
        avg_score: 0.5,
        min_score: 0,
        max_score: 1,
        p95_score: 0.95,
        count_score: 2,
        count_true_ok: 3,
        count_false_ok: 1,
        count: 4,
      },
      {
        timestamp: '2025-01-01T01:00:00+00:00',
        avg_score: null,
        min_score: null,
        max_score: null,
        p95_score: null,
        count_score: 0,
        count_true_ok: 0,
        count_false_ok: 0,
        count: 0,
      },
    ],
    window_stats: { score: { avg: 0.5 } },
  }

  it('gives one series per statistic of a numeric metric, null in empty buckets', () => {
    const data = feedbackSeries(stats, 'score', 'numeric')
    expect(data.x).toEqual([s('2025-01-01T00:00:00Z'), s('2025-01-01T01:00:00Z')])
    expect(data.series).toEqual([
      { label: 'avg', values: [0.5, null] },
      { label: 'min', values: [0, null] },
      { label: 'max', values: [1, null] },
      { label: 'p95', values: [0.95, null] },
      { label: 'count', values: [2, 0] },
    ])
  })

  it('leaves a gap in every statistic but the count where a bucket has no values, though the API says avg 0', () => {
    // Prepare: feedback/stats answers avg 0 (not null) for an empty bucket
    const [full, empty] = stats.buckets as [Record<string, number | null>, Record<string, number | null>]
    const answer: FeedbackStats = { ...stats, buckets: [full, { ...empty, avg_score: 0 }] }

    // Act
    const data = feedbackSeries(answer, 'score', 'numeric')

    // Assess
    expect(data.series.find((x) => x.label === 'avg')?.values).toEqual([0.5, null])
    expect(data.series.find((x) => x.label === 'count')?.values).toEqual([2, 0])
  })

  it('ends the feedback window at the time of each request', () => {
    // Act
    const earlier = feedbackWindow(24 * 7, new Date('2025-01-08T00:00:00Z'))
    const later = feedbackWindow(24 * 7, new Date('2025-01-08T00:05:00Z'))

    // Assess
    expect(earlier).toEqual({ start: '2025-01-01T00:00:00.000Z', end: '2025-01-08T00:00:00.000Z' })
    expect(later.end).toBe('2025-01-08T00:05:00.000Z')
  })

  it('gives the true rate of a boolean metric, null without values', () => {
    expect(feedbackSeries(stats, 'ok', 'boolean').series).toEqual([{ label: 'true rate', values: [0.75, null] }])
  })

  it('slugs json paths as the API does', () => {
    expect(metricSlug('output.score')).toBe('output_score')
    expect(metricSlug('a b.c')).toBe('a_b_c')
  })
})

describe('training series', () => {
  const a = [
    {
      split: 'train',
      step: 1,
      recorded_at: '2025-01-01T00:00:10.000Z',
      metrics: { reward: 0.1, exception_rate: 0, loss: 2 },
    },
    { split: 'train', step: 2, recorded_at: '2025-01-01T00:00:20.000Z', metrics: { reward: 0.2 } },
    { split: 'val', step: 2, recorded_at: '2025-01-01T00:00:25.000Z', metrics: { reward: 0.15 } },
    { split: 'train', step: 2, recorded_at: '2025-01-01T00:00:30.000Z', metrics: { reward: 0.25 } },
  ]
  const b = [{ split: 'train', step: 3, recorded_at: '2025-01-01T00:00:15.500Z', metrics: { reward: 0.3 } }]
  // What Loom records for a loop whose step never advances (it does not train): every log at step 0.
  const still = [
    { split: 'val', step: 0, recorded_at: '2025-01-01T00:01:00.000Z', metrics: { reward: 0.5 } },
    { split: 'val', step: 0, recorded_at: '2025-01-01T00:00:00.000Z', metrics: { reward: 0.25 } },
    { split: 'val', step: 0, recorded_at: '2025-01-01T00:02:00.000Z', metrics: { reward: 0.75 } },
  ]
  const models = [
    { label: 'A', rows: a },
    { label: 'B', rows: b },
  ]

  it('aligns several models on the union of their steps, null where a model did not log', () => {
    const data = trainingSeries(models, 'train', 'reward')
    expect(data.x).toEqual([1, 2, 2, 3])
    expect(data.series).toEqual([
      { label: 'A', values: [0.1, 0.2, 0.25, null] },
      { label: 'B', values: [null, null, null, 0.3] },
    ])
  })

  it('keeps every log at one step, in the order they were logged, rather than the last alone', () => {
    const data = trainingSeries(
      [
        { label: 'still', rows: still },
        { label: 'once', rows: [{ ...(still[0] as (typeof still)[number]), metrics: { reward: 1 } }] },
      ],
      'val',
      'reward',
    )
    expect(data.x).toEqual([0, 0, 0])
    expect(data.series).toEqual([
      { label: 'still', values: [0.25, 0.5, 0.75] },
      { label: 'once', values: [1, null, null] },
    ])
  })

  it('puts each log at the time it was logged (Unix seconds) on the time axis', () => {
    const data = trainingSeries(models, 'train', 'reward', 'time')
    const t0 = Date.parse('2025-01-01T00:00:00Z') / 1000
    expect(data.x).toEqual([t0 + 10, t0 + 15.5, t0 + 20, t0 + 30])
    expect(data.series).toEqual([
      { label: 'A', values: [0.1, null, 0.2, 0.25] },
      { label: 'B', values: [null, 0.3, null, null] },
    ])
  })

  it('charts over the time logged by default when every log is at one step, else over the step', () => {
    expect(defaultTrainingAxis(still)).toBe('time')
    expect(defaultTrainingAxis([...still, ...b])).toBe('step')
    expect(defaultTrainingAxis(a)).toBe('step')
    expect(defaultTrainingAxis([])).toBe('step')
  })

  it('ranks the split-prefixed names of the training log the same way', () => {
    const rows = [
      {
        split: 'train',
        step: 0,
        recorded_at: '',
        metrics: { 'train/a': 1, 'train/exception_rate': 0, 'train/reward': 1 },
      },
    ]
    expect(metricNames(rows).metrics).toEqual(['train/reward', 'train/exception_rate', 'train/a'])
  })

  it('counts the distinct steps logged, not the rows (a step per split, or logged twice, counts once)', () => {
    expect(a).toHaveLength(4)
    expect(loggedSteps(a)).toBe(2)
    expect(loggedSteps([...a, ...b])).toBe(3)
    expect(loggedSteps([])).toBe(0)
  })

  it('lists splits and metrics, reward and exception rate first', () => {
    expect(metricNames([...a, ...b])).toEqual({
      splits: ['train', 'val'],
      metrics: ['reward', 'exception_rate', 'loss'],
    })
  })
})
