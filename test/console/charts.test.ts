import { describe, expect, it } from 'vitest'
import {
  defaultTrainingAxis,
  type FeedbackStats,
  feedbackSeries,
  feedbackWindow,
  loggedSteps,
  metricNames,
  metricSlug,
  stack,
  trainingSeries,
} from '../../console/src/lib/charts.js'

const s = (iso: string) => Date.parse(iso) / 1000

describe('stacked series', () => {
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
