import { describe, expect, it } from 'vitest'
import {
  aggregateUsage,
  bucketStart,
  USAGE_METRICS,
  type UsageRow,
  usageRange,
  usageReportRequest,
  usageSeries,
  usageTimeColumn,
  usageTimeLabel,
  usageTimeZone,
} from '../../console/src/lib/usage-report.js'

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

  it('rounds summed costs as the API does, so a day of sub-cent hours reads 0.000921, not binary noise (QA)', () => {
    // Prepare: three hours whose costs sum to 0.0009210000000000002 in floating point
    const costs = [0.000307, 0.000307, 0.000307]
    const hours = costs.map((cost, i) => row(`2025-01-01T0${i}:00:00Z`, 'm', 'e/p', 1, cost))

    // Act
    const [day] = aggregateUsage(hours, 'model', 'day')

    // Assess
    expect(costs.reduce((a, b) => a + b)).not.toBe(0.000921)
    expect(day?.cost_usd).toBe(0.000921)
  })

  it('sums, charts and exports aborted requests, which the API reports per row (QA)', () => {
    // Prepare
    const aborted = [
      { ...row('2025-01-01T00:00:00Z', 'm', 'e/p', 3), aborted_requests: 1 },
      { ...row('2025-01-01T01:00:00Z', 'm', 'e/p', 2), aborted_requests: 2 },
    ]

    // Act
    const [day] = aggregateUsage(aborted, 'model', 'day')
    const data = usageSeries(aborted, {
      metric: 'aborted_requests',
      groupBy: 'model',
      resolution: 'hour',
      start: s('2025-01-01T00:00:00Z'),
      end: s('2025-01-01T02:00:00Z'),
    })

    // Assess
    expect(USAGE_METRICS).toContain('aborted_requests')
    expect(day?.aborted_requests).toBe(3)
    expect(data.series).toEqual([{ label: 'm', values: [1, 2] }])
  })

  it('aggregates rows for the table, by bucket then key, every measure summed', () => {
    const table = aggregateUsage(rows, 'model', 'day')
    expect(table.map((r) => [r.bucket, r.key, r.requests, r.total_tokens])).toEqual([
      [s('2025-01-01T00:00:00Z'), 'big', 8, 120],
      [s('2025-01-01T00:00:00Z'), 'small', 1, 15],
      [s('2025-01-02T00:00:00Z'), 'small', 2, 30],
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
