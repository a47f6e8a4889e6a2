import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-feedback/handler'
import { app } from '#functions/tracing/get-feedback-stats/handler'
import { jsonInit } from '../../support/auth.js'
import { seedFeedback } from '../../support/feedback.js'
import { newProjectCaller, send } from '../../support/tracing.js'

const numeric = (json_path: string, extra: Record<string, unknown> = {}) => ({
  json_path,
  value_type: 'numeric',
  ...extra,
})

describe('POST /feedback/stats', () => {
  it('returns the full epoch-aligned grid for an empty day (contract example)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const body = {
      project_id: caller.project,
      start: '2024-01-01T01:30:00Z',
      end: '2024-01-02T00:00:00Z',
      metrics: [numeric('output.score')],
    }

    // Act
    const res = await send(app, '/feedback/stats', body, caller)

    // Assess
    const empty = { avg_output_score: 0, min_output_score: null, max_output_score: null, count: 0 }
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      start: '2024-01-01T01:30:00Z',
      end: '2024-01-02T00:00:00Z',
      granularity: 21600,
      timezone: 'UTC',
      buckets: [
        { timestamp: '2024-01-01T00:00:00+00:00', ...empty },
        { timestamp: '2024-01-01T06:00:00+00:00', ...empty },
        { timestamp: '2024-01-01T12:00:00+00:00', ...empty },
        { timestamp: '2024-01-01T18:00:00+00:00', ...empty },
      ],
      window_stats: { output_score: { avg: null, min: null, max: null } },
    })
  })

  it('aggregates created feedback into 5-minute buckets (contract example)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    for (const score of [0.5, 0.8, 1.0]) {
      await send(
        createApp,
        '/feedback/create',
        { project_id: caller.project, weave_ref: 'r', feedback_type: 't', payload: { output: { score } } },
        caller,
      )
    }
    const now = Date.now()

    // Act
    const res = await send(
      app,
      '/feedback/stats',
      {
        project_id: caller.project,
        start: new Date(now - 3600_000).toISOString(),
        end: new Date(now + 300_000).toISOString(),
        metrics: [numeric('output.score')],
      },
      caller,
    )

    // Assess
    expect(res.body.granularity).toBe(300)
    expect(res.body.buckets.reduce((n: number, b: { count: number }) => n + b.count, 0)).toBe(3)
    expect(Object.keys(res.body.buckets[0])).toEqual([
      'timestamp',
      'avg_output_score',
      'min_output_score',
      'max_output_score',
      'count',
    ])
    expect(res.body.window_stats.output_score.avg).toBeCloseTo(2.3 / 3, 10)
    expect(res.body.window_stats.output_score).toMatchObject({ min: 0.5, max: 1 })
  })

  it('writes window_stats values as Python floats (a count of 2 as 2.0, null stays null) and bucket values as they are', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const t = '2024-03-01T10:00:00.000Z'
    for (const payload of [{ x: 1 }, { x: 2 }, { y: 5 }]) await seedFeedback(p, t, payload)
    const metric = numeric('x', { aggregations: ['count', 'sum', 'min'] })
    const empty = numeric('z', { aggregations: ['count', 'min'] })
    const body = { project_id: p, start: '2024-03-01T09:00:00Z', end: '2024-03-01T11:00:00Z', metrics: [metric, empty] }

    // Act
    const res = await app.request('/feedback/stats', jsonInit(body, caller.basic))

    // Assess: Weave's _extract_window_stats answers float(val); rows_to_bucket_dicts keeps the column types
    const text = await res.text()
    expect(res.status).toBe(200)
    expect(text).toContain('"window_stats":{"x":{"count":2.0,"sum":3.0,"min":1.0},"z":{"count":null,"min":null}}')
    expect(text).toContain('"count_x":2,"sum_x":3,"min_x":1,"count_z":0,"min_z":null,"count":3}')
  })

  it('extracts values per type the ClickHouse way', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const t = '2024-03-01T10:00:00.000Z'
    for (const payload of [{ ok: true }, { ok: false }, { ok: true }, { ok: 'true' }])
      await seedFeedback(p, t, payload, { feedback_type: 'bool' })
    for (const payload of [{ x: 1 }, { x: '2' }, { x: true }, { y: 5 }])
      await seedFeedback(p, t, payload, { feedback_type: 'num' })
    for (const payload of [{ c: 'a' }, { c: 'b' }, { c: 1 }])
      await seedFeedback(p, t, payload, { feedback_type: 'cat' })
    const stats = (feedback_type: string, metric: Record<string, unknown>) =>
      send(
        app,
        '/feedback/stats',
        { project_id: p, start: '2024-03-01T09:00:00Z', end: '2024-03-01T11:00:00Z', feedback_type, metrics: [metric] },
        caller,
      )

    // Act
    const bool = await stats('bool', { json_path: 'ok', value_type: 'boolean' })
    const num = await stats('num', numeric('x', { aggregations: ['count', 'sum'] }))
    const cat = await stats('cat', { json_path: 'c', value_type: 'categorical' })

    // Assess
    expect(bool.body.window_stats).toEqual({ ok: { count_true: 2, count_false: 1 } })
    expect(num.body.window_stats).toEqual({ x: { count: 1, sum: 1 } })
    expect(num.body.buckets.find((b: { count: number }) => b.count > 0)).toEqual({
      timestamp: '2024-03-01T10:00:00+00:00',
      count_x: 1,
      sum_x: 1,
      count: 4,
    })
    expect(cat.body.window_stats).toEqual({ c: { count: 3 } })
  })

  it('computes every aggregation and percentile per bucket and over the window', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const values = [1, 2, 3, 4, 10]
    for (const [i, v] of values.entries()) await seedFeedback(caller.project, `2024-05-01T00:0${i}:00.000Z`, { s: v })
    await seedFeedback(caller.project, '2024-05-01T01:10:00.000Z', { s: 7 })

    // Act
    const res = await send(
      app,
      '/feedback/stats',
      {
        project_id: caller.project,
        start: '2024-05-01T00:00:00Z',
        end: '2024-05-01T02:00:00Z',
        granularity: 3600,
        metrics: [numeric('s', { aggregations: ['sum', 'avg', 'min', 'max', 'count'], percentiles: [50, 95, 99.5] })],
      },
      caller,
    )

    // Assess
    expect(res.body.buckets).toEqual([
      {
        timestamp: '2024-05-01T00:00:00+00:00',
        sum_s: 20,
        avg_s: 4,
        min_s: 1,
        max_s: 10,
        count_s: 5,
        p50_s: 3,
        p95_s: 8.8,
        'p99.5_s': 9.88,
        count: 5,
      },
      {
        timestamp: '2024-05-01T01:00:00+00:00',
        sum_s: 7,
        avg_s: 7,
        min_s: 7,
        max_s: 7,
        count_s: 1,
        p50_s: 7,
        p95_s: 7,
        'p99.5_s': 7,
        count: 1,
      },
    ])
    expect(res.body.window_stats).toEqual({
      s: { sum: 27, avg: 4.5, min: 1, max: 10, count: 6, p50: 3.5, p95: 9.25, 'p99.5': 9.925 },
    })
  })

  it('filters by feedback_type and by trigger_ref, exact or with :*', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const t = '2024-06-01T00:00:00.000Z'
    const mon = `weave:///${p}/object/mon`
    await seedFeedback(p, t, { v: 1 }, { feedback_type: 'a', trigger_ref: `${mon}:d1` })
    await seedFeedback(p, t, { v: 2 }, { feedback_type: 'a', trigger_ref: `${mon}:d2` })
    await seedFeedback(p, t, { v: 4 }, { feedback_type: 'b', trigger_ref: `${mon}:d1` })
    const sum = async (filters: Record<string, unknown>) =>
      (
        await send(
          app,
          '/feedback/stats',
          {
            project_id: p,
            start: t,
            end: '2024-06-01T01:00:00Z',
            ...filters,
            metrics: [numeric('v', { aggregations: ['sum'] })],
          },
          caller,
        )
      ).body.window_stats.v.sum

    // Act
    const results = await Promise.all([
      sum({}),
      sum({ feedback_type: 'a' }),
      sum({ trigger_ref: `${mon}:d1` }),
      sum({ trigger_ref: `${mon}:*` }),
      sum({ feedback_type: 'a', trigger_ref: `${mon}:d1` }),
    ])

    // Assess
    expect(results).toEqual([7, 3, 5, 7, 1])
  })

  it('matches a trigger_ref ending in :* against every ref that starts with it minus :*, in its project only', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const other = await newProjectCaller()
    const p = caller.project
    const t = '2024-06-01T00:00:00.000Z'
    const objects = `weave:///${p}/object`
    await seedFeedback(p, t, { v: 1 }, { feedback_type: 'a', trigger_ref: `${objects}/mon:abc` })
    await seedFeedback(p, t, { v: 2 }, { feedback_type: 'b', trigger_ref: `${objects}/monitor2:abc` })
    await seedFeedback(p, t, { v: 4 }, { feedback_type: 'a', trigger_ref: `${objects}/other:abc` })
    await seedFeedback(p, t, { v: 8 }, { feedback_type: 'a' })
    await seedFeedback(other.project, t, { v: 16 }, { feedback_type: 'a', trigger_ref: `${objects}/mon:abc` })
    const sum = async (filters: Record<string, unknown>) => {
      const body = { project_id: p, start: t, end: '2024-06-01T01:00:00Z', ...filters }
      const res = await send(
        app,
        '/feedback/stats',
        { ...body, metrics: [numeric('v', { aggregations: ['sum'] })] },
        caller,
      )
      return res.body.window_stats.v.sum
    }

    // Act
    const results = await Promise.all([
      sum({ trigger_ref: `${objects}/mon:*` }),
      sum({ trigger_ref: `${objects}/mon:*`, feedback_type: 'a' }),
      sum({ trigger_ref: `${objects}/monitor2:*` }),
      sum({ trigger_ref: `${objects}/mon:abc` }),
      sum({ trigger_ref: `${objects}/monitor2:abc`, feedback_type: 'b' }),
      sum({ trigger_ref: ':*' }),
    ])

    // Assess
    expect(results).toEqual([3, 1, 2, 1, 2, 7])
  })

  it('renders bucket timestamps in the requested time zone on the same epoch-aligned grid', async () => {
    const caller = await newProjectCaller()
    const res = await send(
      app,
      '/feedback/stats',
      {
        project_id: caller.project,
        start: '2024-01-01T00:00:00Z',
        end: '2024-01-01T02:00:00Z',
        granularity: 3600,
        timezone: 'America/New_York',
        metrics: [numeric('x')],
      },
      caller,
    )
    expect(res.body.timezone).toBe('America/New_York')
    expect(res.body.buckets.map((b: { timestamp: string }) => b.timestamp)).toEqual([
      '2023-12-31T19:00:00-05:00',
      '2023-12-31T20:00:00-05:00',
    ])
  })

  it('answers without a query when no metric is requested', async () => {
    const caller = await newProjectCaller()
    const res = await send(
      app,
      '/feedback/stats',
      { project_id: caller.project, start: '2024-01-01T00:00:00', end: '2024-01-01T05:00:00' },
      caller,
    )
    expect(res.body).toEqual({
      start: '2024-01-01T00:00:00Z',
      end: '2024-01-01T05:00:00Z',
      granularity: 3600,
      timezone: 'UTC',
      buckets: [],
      window_stats: null,
    })
  })

  it('picks the automatic granularity at the documented bounds', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const start = Date.parse('2024-01-01T00:00:00Z')
    const g = async (seconds: number, granularity?: number) =>
      (
        await send(
          app,
          '/feedback/stats',
          {
            project_id: caller.project,
            start: new Date(start).toISOString(),
            end: new Date(start + seconds * 1000).toISOString(),
            granularity,
            metrics: [numeric('x')],
          },
          caller,
        )
      ).body.granularity

    // Act
    const results = await Promise.all([
      g(3600),
      g(7200),
      g(7201),
      g(86400),
      g(7 * 86400),
      g(20 * 86400),
      g(31 * 86400, 60),
    ])

    // Assess
    expect(results).toEqual([300, 300, 3600, 21600, 43200, 86400, 268])
  })

  it('keeps a window in years 0001..0099 as given', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seedFeedback(caller.project, '0050-01-01T00:06:00.000Z', { v: 2 })
    const body = {
      project_id: caller.project,
      start: '0050-01-01T00:00:00Z',
      end: '0050-01-01T00:10:00Z',
      metrics: [numeric('v', { aggregations: ['sum'] })],
    }

    // Act
    const res = await send(app, '/feedback/stats', body, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ start: '0050-01-01T00:00:00Z', end: '0050-01-01T00:10:00Z', granularity: 300 })
    expect(res.body.buckets).toEqual([
      { timestamp: '0050-01-01T00:00:00+00:00', sum_v: 0, count: 0 },
      { timestamp: '0050-01-01T00:05:00+00:00', sum_v: 2, count: 1 },
    ])
  })

  it('reads numeric start and end as pydantic does (milliseconds above 2e10) and answers 422 out of range', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const stats = (start: number, end: number) =>
      send(app, '/feedback/stats', { project_id: caller.project, start, end, metrics: [numeric('v')] }, caller)

    // Act
    const millis = await stats(1e13, 1e13 + 10)
    const negative = await stats(-1e12, -1e12 + 600_000)
    const seconds = await stats(1_700_000_000, 1_700_000_600)
    const tooLate = await stats(1e16, 1e16 + 10)
    const yearZero = await stats(-62_135_596_801_000, -62_135_596_800_000)

    // Assess
    expect(millis.status).toBe(200)
    expect(millis.body).toMatchObject({ start: '2286-11-20T17:46:40Z', end: '2286-11-20T17:46:40.010000Z' })
    expect(millis.body.buckets[0].timestamp).toBe('2286-11-20T17:45:00+00:00')
    expect(negative.body).toMatchObject({ start: '1938-04-24T22:13:20Z', end: '1938-04-24T22:23:20Z' })
    expect(negative.body.buckets[0].timestamp).toBe('1938-04-24T22:10:00+00:00')
    expect(seconds.body).toMatchObject({ start: '2023-11-14T22:13:20Z', end: '2023-11-14T22:23:20Z' })
    expect(tooLate.status).toBe(422)
    expect(tooLate.body.detail).toEqual([
      {
        type: 'datetime_parsing',
        loc: ['body', 'start'],
        msg: 'Input should be a valid datetime, dates after 9999 are not supported as unix timestamps',
        input: 1e16,
        ctx: { error: 'dates after 9999 are not supported as unix timestamps' },
      },
      {
        type: 'datetime_parsing',
        loc: ['body', 'end'],
        msg: 'Input should be a valid datetime, dates after 9999 are not supported as unix timestamps',
        input: 1e16 + 10,
        ctx: { error: 'dates after 9999 are not supported as unix timestamps' },
      },
    ])
    expect(yearZero.status).toBe(422)
    expect(yearZero.body.detail[0].msg).toBe('Input should be a valid datetime, year 0 is out of range')
  })

  it('answers 422 for a reversed or over-long window and unknown aggregations', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const stats = (body: Record<string, unknown>) =>
      send(app, '/feedback/stats', { project_id: caller.project, ...body }, caller)

    // Act
    const reversed = await stats({ start: '2024-01-02T00:00:00Z', end: '2024-01-01T00:00:00Z' })
    const tooLong = await stats({ start: '2024-01-01T00:00:00Z', end: '2024-02-01T00:00:01Z' })
    const exactly31 = await stats({ start: '2024-01-01T00:00:00Z', end: '2024-02-01T00:00:00Z' })
    const badAgg = await stats({ start: '2024-01-01T00:00:00Z', metrics: [numeric('x', { aggregations: ['median'] })] })
    const badDate = await stats({ start: 'yesterday' })

    // Assess
    expect(reversed.status).toBe(422)
    expect(reversed.body.detail[0].msg).toBe('Value error, Feedback request end must be after start')
    expect(tooLong.body.detail[0].msg).toBe('Value error, Feedback request date range cannot exceed 31 days')
    expect(exactly31.status).toBe(200)
    expect(badAgg.status).toBe(422)
    expect(badDate.status).toBe(422)
  })

  it('answers 400 for bad json paths, percentiles and time zones, and 403 for a foreign project', async () => {
    // Prepare
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const stats = (metrics: unknown[], extra: Record<string, unknown> = {}) =>
      send(
        app,
        '/feedback/stats',
        { project_id: a.project, start: '2024-01-01T00:00:00Z', end: '2024-01-01T01:00:00Z', metrics, ...extra },
        a,
      )

    // Act
    const empty = await stats([numeric('')])
    const chars = await stats([numeric('a-b')])
    const pct = await stats([numeric('x', { percentiles: [101] })])
    const zone = await stats([numeric('x')], { timezone: 'Mars/Olympus' })
    const foreign = await send(app, '/feedback/stats', { project_id: b.project, start: '2024-01-01T00:00:00Z' }, a)

    // Assess
    expect(empty).toEqual({ status: 400, body: { reason: 'json_path cannot be empty' } })
    expect(chars).toEqual({ status: 400, body: { reason: "json_path may only contain [a-zA-Z0-9_. ], got: 'a-b'" } })
    expect(pct).toEqual({ status: 400, body: { reason: 'Percentile must be between 0 and 100, got 101.0' } })
    expect(zone.status).toBe(400)
    expect(foreign.status).toBe(403)
  })

  it('fills the default aggregations whenever none are given, percentiles or not (newest FeedbackMetricSpec)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const t = '2024-06-01T00:01:00.000Z'
    for (const payload of [
      { s: 1, ok: true },
      { s: 3, ok: false },
      { s: 5, ok: true },
    ])
      await seedFeedback(caller.project, t, payload)
    const stats = (metrics: unknown[]) =>
      send(
        app,
        '/feedback/stats',
        { project_id: caller.project, start: '2024-06-01T00:00:00Z', end: '2024-06-01T01:00:00Z', metrics },
        caller,
      )

    // Act
    const withPct = await stats([numeric('s', { percentiles: [50] })])
    const explicitEmpty = await stats([numeric('s', { aggregations: [], percentiles: [] })])
    const boolPct = await stats([{ json_path: 'ok', value_type: 'boolean', percentiles: [50] }])

    // Assess
    expect(withPct.body.window_stats).toEqual({ s: { avg: 3, min: 1, max: 5, p50: 3 } })
    expect(Object.keys(withPct.body.buckets[0])).toEqual(['timestamp', 'avg_s', 'min_s', 'max_s', 'p50_s', 'count'])
    expect(explicitEmpty.body.window_stats).toEqual({ s: { avg: 3, min: 1, max: 5 } })
    expect(boolPct.body.window_stats).toEqual({ ok: { count_true: 2, count_false: 1, p50: 1 } })
  })

  it('reports an empty window as countOrNull/avgOrNull/quantileOrNull do: null, with countIf at 0', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seedFeedback(caller.project, '2024-06-01T00:01:00.000Z', { other: 1 })

    // Act
    const res = await send(
      app,
      '/feedback/stats',
      {
        project_id: caller.project,
        start: '2024-06-01T00:00:00Z',
        end: '2024-06-01T00:05:00Z',
        metrics: [
          numeric('s', { aggregations: ['count', 'sum', 'avg', 'min', 'max'], percentiles: [90] }),
          { json_path: 'ok', value_type: 'boolean' },
        ],
      },
      caller,
    )

    // Assess
    expect(res.body.window_stats).toEqual({
      s: { count: null, sum: null, avg: null, min: null, max: null, p90: null },
      ok: { count_true: 0, count_false: 0 },
    })
    expect(res.body.buckets).toEqual([
      {
        timestamp: '2024-06-01T00:00:00+00:00',
        count_s: 0,
        sum_s: 0,
        avg_s: 0,
        min_s: null,
        max_s: null,
        p90_s: null,
        count_true_ok: 0,
        count_false_ok: 0,
        count: 1,
      },
    ])
  })

  it('takes json paths with spaces (classifier names) and names the window by parsing aliases', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const payload = { output: { classifier_meta: { 'Low quality': { confidence: 0.95 } } }, true_x: 1 }
    await seedFeedback(caller.project, '2024-06-01T00:01:00.000Z', payload)

    // Act
    const res = await send(
      app,
      '/feedback/stats',
      {
        project_id: caller.project,
        start: '2024-06-01T00:00:00Z',
        end: '2024-06-01T00:05:00Z',
        metrics: [
          numeric('output.classifier_meta.Low quality.confidence', { aggregations: ['max'] }),
          numeric('true_x', { aggregations: ['count'], percentiles: [0.00001] }),
        ],
      },
      caller,
    )

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.buckets[0]).toEqual({
      timestamp: '2024-06-01T00:00:00+00:00',
      max_output_classifier_meta_Low_quality_confidence: 0.95,
      count_true_x: 1,
      'p1e-05_true_x': 1,
      count: 1,
    })
    // `count_true_x` parses as count_true of `x`; `p1e-05_…` does not parse and is left out.
    expect(res.body.window_stats).toEqual({
      output_classifier_meta_Low_quality_confidence: { max: 0.95 },
      x: { count_true: 1 },
    })
  })

  it('checks every json path before any percentile, with the messages of the newest builder', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const stats = (metrics: unknown[]) =>
      send(
        app,
        '/feedback/stats',
        { project_id: caller.project, start: '2024-01-01T00:00:00Z', end: '2024-01-01T01:00:00Z', metrics },
        caller,
      )

    // Act
    const blank = await stats([numeric('  ')])
    const quote = await stats([numeric("output'score")])
    const order = await stats([numeric('x', { percentiles: [-1] }), numeric('a[0]')])
    const fraction = await stats([numeric('x', { percentiles: [100.5] })])

    // Assess
    expect(blank.body).toEqual({ reason: 'json_path cannot be empty' })
    expect(quote.body).toEqual({ reason: `json_path may only contain [a-zA-Z0-9_. ], got: "output'score"` })
    expect(order.body).toEqual({ reason: "json_path may only contain [a-zA-Z0-9_. ], got: 'a[0]'" })
    expect(fraction.body).toEqual({ reason: 'Percentile must be between 0 and 100, got 100.5' })
  })
})
