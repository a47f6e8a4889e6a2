import { describe, expect, it } from 'vitest'
import {
  CALL_STATUSES,
  type Call,
  type CallFilters,
  callLatency,
  callName,
  callStatus,
  callsPageRequest,
  callsQuery,
  callsStatsRequest,
  pagerState,
  SHOWN_NAME,
  TOTAL_CAP,
  toIso,
  totalCost,
  tracePageRequest,
  traceUsageRequest,
  USAGE_CALLS_CAP,
} from '../../console/src/lib/calls.js'

const NONE: CallFilters = { op: '', status: '', from: '', to: '', text: '', rootsOnly: false }
const base: Call = { id: 'c1', project_id: 'e/p', op_name: 'op', trace_id: 't1', started_at: '2025-01-01T00:00:00Z' }

describe('callsQuery', () => {
  it('is undefined without filters', () => {
    expect(callsQuery(NONE)).toBeUndefined()
  })

  it('filters on the name a row shows (case-insensitive substring), status and a started_at range', () => {
    // Act
    const q = callsQuery({
      ...NONE,
      op: ' predict ',
      status: 'error',
      from: '2025-01-01T00:00:00Z',
      to: '2025-01-02T00:00:00Z',
    })

    // Assess
    expect(q).toEqual({
      $expr: {
        $and: [
          {
            $contains: {
              input: { $getField: 'summary.weave.trace_name' },
              substr: { $literal: 'predict' },
              case_insensitive: true,
            },
          },
          { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'error' }] },
          { $gte: [{ $getField: 'started_at' }, { $literal: '2025-01-01T00:00:00.000Z' }] },
          { $lt: [{ $getField: 'started_at' }, { $literal: '2025-01-02T00:00:00.000Z' }] },
        ],
      },
    })
  })

  it('searches free text in the shown name, output and exception, the fields $contains can match', () => {
    const q = callsQuery({ ...NONE, text: 'needle' }) as { $expr: { $or: unknown[] } }
    const contains = (field: string) => ({
      $contains: { input: { $getField: field }, substr: { $literal: 'needle' }, case_insensitive: true },
    })
    // Not `op_name`: its hidden `weave:///<entity>/<project>/op/<name>:<digest>` ref holds the entity and project names.
    expect(q.$expr.$or).toEqual(['summary.weave.trace_name', 'output', 'exception'].map(contains))
  })

  it('filters on every status a row can show, descendant_error included', () => {
    // Assess: the status select offers what callStatus (and the API's summary.weave.status) can give
    expect(CALL_STATUSES).toEqual(['success', 'error', 'descendant_error', 'running'])
    expect(callsQuery({ ...NONE, status: 'descendant_error' })).toEqual({
      $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'descendant_error' }] },
    })
  })

  it('ignores an invalid date', () => {
    expect(toIso('garbage')).toBeUndefined()
    expect(callsQuery({ ...NONE, from: 'garbage' })).toBeUndefined()
  })
})

describe('callsPageRequest', () => {
  it('pages newest first with costs, the table columns and the roots filter', () => {
    const body = callsPageRequest(
      'e/p',
      { ...NONE, rootsOnly: true },
      { column: 'started', direction: 'desc' },
      { offset: 50, limit: 50 },
    )
    expect(body).toMatchObject({
      project_id: 'e/p',
      filter: { trace_roots_only: true },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
      offset: 50,
      limit: 50,
      include_costs: true,
    })
    expect(body.columns).toContain('summary')
    expect(body).not.toHaveProperty('query')
  })

  it('sorts by the column path, and by start time for columns the API cannot sort', () => {
    const by = (column: 'latency' | 'tokens' | 'op', direction: 'asc' | 'desc') =>
      callsPageRequest('e/p', NONE, { column, direction }, { offset: 0, limit: 10 }).sort_by
    expect(by('latency', 'asc')).toEqual([{ field: 'summary.weave.latency_ms', direction: 'asc' }])
    // The name as shown, not the op ref (which sorts by entity, project and `op/`, the same for every Weave op).
    expect(by('op', 'asc')).toEqual([{ field: SHOWN_NAME, direction: 'asc' }])
    expect(by('tokens', 'asc')).toEqual([{ field: 'started_at', direction: 'desc' }])
  })

  it('asks query_stats for the same selection, counted up to the cap unless unfiltered', () => {
    expect(callsStatsRequest('e/p', { ...NONE, status: 'running' })).toEqual({
      project_id: 'e/p',
      query: { $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'running' }] } },
      limit: TOTAL_CAP,
    })
    expect(callsStatsRequest('e/p', { ...NONE, rootsOnly: true })).toEqual({
      project_id: 'e/p',
      filter: { trace_roots_only: true },
      limit: 10_000,
    })
    // The unfiltered total comes from the call counter: exact whatever its size.
    expect(callsStatsRequest('e/p', NONE)).toEqual({ project_id: 'e/p' })
  })
})

describe('pagerState', () => {
  it('shows the range with the total, and no Next past it', () => {
    expect(pagerState(0, 50, 50, { count: 120 })).toEqual({ range: '1–50 of 120', hasNext: true, previous: 0 })
    expect(pagerState(100, 20, 50, { count: 120 })).toEqual({ range: '101–120 of 120', hasNext: false, previous: 50 })
    expect(pagerState(0, 50, 50, { count: 50 })).toEqual({ range: '1–50 of 50', hasNext: false, previous: 0 })
  })

  it('keeps Next past a capped total that has more', () => {
    expect(pagerState(9_950, 50, 50, { count: 10_000, has_more: true })).toEqual({
      range: '9,951–10,000 of 10,000+',
      hasNext: true,
      previous: 9_900,
    })
  })

  it('marks the total as counting and pages by the page length while it is unknown', () => {
    expect(pagerState(0, 50, 50, undefined)).toEqual({ range: '1–50 of …', hasNext: true, previous: 0 })
    expect(pagerState(50, 7, 50, undefined)).toEqual({ range: '51–57 of …', hasNext: false, previous: 0 })
    expect(pagerState(0, 0, 50, undefined)).toEqual({ range: '', hasNext: false, previous: 0 })
  })

  it('goes back from an offset past the last row to the last page with rows', () => {
    // A link to offset 5,000 of 1,200 traces: one page back (4,950) would be empty too
    expect(pagerState(5_000, 0, 50, { count: 1_200 })).toEqual({ range: '', hasNext: false, previous: 1_150 })
    expect(pagerState(1_250, 0, 50, { count: 1_250 })).toEqual({ range: '', hasNext: false, previous: 1_200 })
    expect(pagerState(75, 0, 50, { count: 0 })).toEqual({ range: '', hasNext: false, previous: 0 })
    // Just past the end of a last page that is not full: the last page's own offset, not one page back
    expect(pagerState(61, 0, 25, { count: 61 }).previous).toBe(50)
    expect(pagerState(1_230, 0, 50, { count: 1_210 }).previous).toBe(1_200)
    // Just past the end, one page back is the last page already
    expect(pagerState(1_200, 0, 50, { count: 1_200 }).previous).toBe(1_150)
    // Unknown or capped totals: one page back
    expect(pagerState(5_000, 0, 50, undefined).previous).toBe(4_950)
    expect(pagerState(20_000, 0, 50, { count: 10_000, has_more: true }).previous).toBe(19_950)
  })
})

describe('tracePageRequest', () => {
  it('asks for a page of the trace in id order, lean, after the last id seen', () => {
    // Act
    const first = tracePageRequest('e/p', 't1', undefined, 200)
    const next = tracePageRequest('e/p', 't1', 'c-199', 1000)

    // Assess
    expect(first).toEqual({
      project_id: 'e/p',
      filter: { trace_ids: ['t1'] },
      sort_by: [{ field: 'id', direction: 'asc' }],
      limit: 200,
      columns: [
        'id',
        'op_name',
        'display_name',
        'trace_id',
        'parent_id',
        'started_at',
        'ended_at',
        'exception',
        'summary',
      ],
      include_costs: true,
    })
    expect(next).toMatchObject({ limit: 1000, query: { $expr: { $gt: [{ $getField: 'id' }, { $literal: 'c-199' }] } } })
    // No large JSON column: the server reads the trace lean; a selected call's inputs come from call/read.
    expect((first.columns as string[]).some((c) => ['inputs', 'output', 'attributes'].includes(c))).toBe(false)
  })
})

describe('traceUsageRequest', () => {
  it('reads every call of the traces with ids, parents and summaries with costs, unordered so the cap stops the walk', () => {
    expect(traceUsageRequest('e/p', ['t1', 't2'])).toEqual({
      project_id: 'e/p',
      filter: { trace_ids: ['t1', 't2'] },
      sort_by: [],
      limit: USAGE_CALLS_CAP,
      include_costs: true,
      columns: ['id', 'parent_id', 'trace_id', 'summary'],
    })
  })
})

describe('derived call values', () => {
  const done: Call = {
    ...base,
    ended_at: '2025-01-01T00:00:01Z',
    summary: {
      usage: {
        'gpt-4o': { requests: 1, prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        other: { input_tokens: 3, output_tokens: 4 },
      },
      weave: {
        status: 'success',
        latency_ms: 1000,
        costs: {
          'gpt-4o': {
            prompt_tokens_total_cost: 0.001,
            completion_tokens_total_cost: 0.002,
            cache_read_input_tokens_total_cost: 0.0005,
          },
        },
      },
    },
  }

  it('reads status and latency from the summary', () => {
    expect(callStatus(done)).toBe('success')
    expect(callLatency(done)).toBe(1000)
  })

  it('prices a model by every *_total_cost it carries, cache reads and creations included', () => {
    // Prepare: one model's entry as trace/usage answers it with include_costs
    const entry = {
      requests: 1,
      prompt_tokens: 100,
      completion_tokens: 20,
      cache_read_input_tokens: 3000,
      prompt_tokens_total_cost: 0.1,
      completion_tokens_total_cost: 0.04,
      cache_read_input_tokens_total_cost: 3,
      cache_creation_input_tokens_total_cost: 1,
    }

    // Act
    const cost = totalCost(entry)

    // Assess
    expect(cost).toBeCloseTo(4.14, 12)
    expect(totalCost({ requests: 1, prompt_tokens_total_cost: null })).toBeNull()
  })

  it('derives the status of a call without a summary, and has no latency', () => {
    expect(callStatus(base)).toBe('running')
    expect(callStatus({ ...base, exception: 'boom', ended_at: '2025-01-01T00:00:01Z' })).toBe('error')
    expect(callLatency(base)).toBeNull()
  })

  it('names a call by its display name, else the op ref name without version', () => {
    expect(callName({ op_name: 'weave:///e/p/op/predict:abc123' })).toBe('predict')
    expect(callName({ op_name: 'weave:///e/p/op/predict:abc123', display_name: 'My run' })).toBe('My run')
    expect(callName({ op_name: 'plain-op' })).toBe('plain-op')
  })
})
