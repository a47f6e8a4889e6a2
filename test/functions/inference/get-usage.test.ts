import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as chatApp } from '#functions/inference/create-chat-completion/handler'
import { app } from '#functions/inference/get-usage/handler'
import { flushUsage, recordUsage } from '#shared/inference/usage-meter'
import type { CatalogModel } from '#shared/schemas/model'
import { jsonInit } from '../../support/auth.js'
import { upstreamModelFixture } from '../../support/models.js'

const { caller, model } = await upstreamModelFixture(() => ({ prices: { prompt: 0.001, completion: 0.002 } }))

type Report = {
  entity: string
  project: string | null
  start: string
  end: string
  data: {
    hour: string
    project: string
    model: string
    requests: number
    prompt_tokens: number
    completion_tokens: number
    total_tokens: number
    cost_usd: number
  }[]
  total: { requests: number; total_tokens: number; cost_usd: number }
}

type Metered = { at: string; prompt?: number; completion?: number; cached?: number; aborted?: boolean }

// Meters completions at given times through the meter (as the gateway does, at a chosen hour) into a fresh project of
// the caller's entity, priced per token, and flushes them; returns the project's `<entity>/<project>`.
async function meter(entries: Metered[], prices = { prompt: 0.001, completion: 0.002 }): Promise<string> {
  const project = `usage-${randomUUID().slice(0, 8)}`
  const priced: CatalogModel = { id: model, backend: { kind: 'reference' }, entities: [caller.entity], prices }
  for (const e of entries) {
    recordUsage({
      entity: caller.entity,
      project,
      model: priced,
      usage: {
        prompt_tokens: e.prompt ?? 5,
        completion_tokens: e.completion ?? 3,
        prompt_tokens_details: { cached_tokens: e.cached ?? 0 },
      },
      aborted: e.aborted ?? false,
      at: new Date(e.at),
    })
  }
  await flushUsage()
  return `${caller.entity}/${project}`
}

async function report(query: string): Promise<Report> {
  const res = await app.request(`/v1/usage?${query}`, { headers: caller.bearer })
  expect(res.status, await res.clone().text()).toBe(200)
  return (await res.json()) as Report
}

async function complete(headers: Record<string, string> = {}) {
  const body = { model, messages: [{ role: 'user', content: 'one two three' }] }
  await (await chatApp.request('/v1/chat/completions', jsonInit(body, { ...caller.bearer, ...headers }))).json()
}

describe('GET /v1/usage', () => {
  it('reports a project per hour and model with tokens and costs at the model prices', async () => {
    // Prepare
    await complete({ 'OpenAI-Project': `${caller.entity}/alpha` })
    await complete({ 'OpenAI-Project': `${caller.entity}/alpha` })
    await flushUsage()

    // Act
    const res = await app.request(`/v1/usage?project=${caller.entity}/alpha`, { headers: caller.bearer })

    // Assess
    expect(res.status).toBe(200)
    const report = (await res.json()) as Report
    expect(report.project).toBe(`${caller.entity}/alpha`)
    expect(report.data).toHaveLength(1)
    expect(report.data[0]).toMatchObject({
      project: `${caller.entity}/alpha`,
      model,
      requests: 2,
      prompt_tokens: 10,
      completion_tokens: 6,
      total_tokens: 16,
    })
    expect(report.total.cost_usd).toBeCloseTo(10 * 0.001 + 6 * 0.002, 9)
  })

  it('attributes requests without a project header to the project inference of the key entity', async () => {
    // Prepare
    await complete()
    await flushUsage()

    // Act
    const named = await app.request('/v1/usage?project=inference', { headers: caller.bearer })
    const all = await app.request('/v1/usage', { headers: caller.bearer })

    // Assess
    const report = (await named.json()) as Report
    expect(report.data.map((r) => r.project)).toEqual([`${caller.entity}/inference`])
    expect(report.total.requests).toBe(1)
    const everything = (await all.json()) as Report
    expect(everything.project).toBeNull()
    expect(everything.total.requests).toBeGreaterThanOrEqual(3)
  })

  it('limits the report to the time range', async () => {
    const res = await app.request(
      `/v1/usage?project=${caller.entity}/alpha&start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z`,
      {
        headers: caller.bearer,
      },
    )
    expect(res.status).toBe(200)
    expect(((await res.json()) as Report).data).toEqual([])
  })

  it('refuses a foreign entity with 403 and bad times with 400', async () => {
    const foreign = await app.request('/v1/usage?project=someone/else', { headers: caller.bearer })
    expect(foreign.status).toBe(403)
    const bad = await app.request('/v1/usage?start=yesterday', { headers: caller.bearer })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({
      error: {
        message: "`start` must be an ISO 8601 time or Unix seconds, got 'yesterday'",
        type: 'BadRequestError',
        param: 'start',
        code: 400,
      },
    })
  })

  it("refuses a project name W&B refuses with 400 naming `project`, and another entity's project with 403 (QA)", async () => {
    // Prepare: `%25` and `%23` arrive as '%' and '#'.
    const cases = [
      [`${caller.entity}/a:b`, `${caller.entity}/a:b`, "':'"],
      [`${caller.entity}/a%25b`, `${caller.entity}/a%b`, "'%'"],
      ['up%23ns', `${caller.entity}/up#ns`, "'#'"],
    ]

    for (const [query, project, char] of cases) {
      // Act
      const res = await app.request(`/v1/usage?project=${query}`, { headers: caller.bearer })

      // Assess
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({
        error: {
          message: `Invalid project '${project}': a project name cannot contain characters: ${char}`,
          type: 'BadRequestError',
          param: 'project',
          code: 400,
        },
      })
    }
    const foreign = await app.request('/v1/usage?project=someone/else', { headers: caller.bearer })
    expect(foreign.status).toBe(403)
  })

  it('answers 400 for a time outside the years 0000-9999 instead of a failed query', async () => {
    // Prepare: ISO 8601 expanded years, and Unix seconds before year 0.
    const queries = [
      ['start=%2B009999-06-01T00:00:00Z&end=%2B010000-01-01T00:00:00Z', 'end'],
      ['start=%2B010000-01-01T00:00:00Z&end=%2B010000-01-02T00:00:00Z', 'start'],
      ['start=-000001-12-31T12:00:00Z&end=0000-01-01T06:00:00Z', 'start'],
      ['end=0000-01-01T06:00:00Z', 'start'],
      ['start=-62167219300&end=-62167219200', 'start'],
    ]

    for (const [query, param] of queries) {
      // Act
      const res = await app.request(`/v1/usage?${query}`, { headers: caller.bearer })

      // Assess
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({
        error: {
          message: `\`${param}\` must fall within the years 0000 to 9999`,
          type: 'BadRequestError',
          param,
          code: 400,
        },
      })
    }
    const earliest = await app.request('/v1/usage?start=0000-01-01T00:00:00Z&end=0000-01-01T06:00:00Z', {
      headers: caller.bearer,
    })
    expect(earliest.status).toBe(200)
  })

  it('counts the hours from the hour of `start` up to, not including, `end`, and echoes those bounds', async () => {
    // Prepare: usage between 10:24 and 10:34, and just after midnight the next day
    const project = await meter([
      { at: '2026-11-28T10:24:00Z' },
      { at: '2026-11-28T10:34:00Z' },
      { at: '2026-11-29T00:10:00Z' },
    ])
    const after = Date.parse('2026-11-28T10:34:30Z') / 1000
    const cases: [string, number, string, string][] = [
      // A window ending at 10:00 leaves the 10:00 hour out; one a millisecond later takes it in.
      [
        'start=2026-11-28T00:00:00Z&end=2026-11-28T10:00:00Z',
        0,
        '2026-11-28T00:00:00.000Z',
        '2026-11-28T10:00:00.000Z',
      ],
      [
        'start=2026-11-28T00:00:00Z&end=2026-11-28T10:00:00.001Z',
        2,
        '2026-11-28T00:00:00.000Z',
        '2026-11-28T10:00:00.001Z',
      ],
      // `start` is rounded down to its hour, and the answer says so.
      [`start=${after}&end=2026-11-28T11:00:00Z`, 2, '2026-11-28T10:00:00.000Z', '2026-11-28T11:00:00.000Z'],
      // Back-to-back days count the midnight hour once.
      [
        'start=2026-11-28T00:00:00Z&end=2026-11-29T00:00:00Z',
        2,
        '2026-11-28T00:00:00.000Z',
        '2026-11-29T00:00:00.000Z',
      ],
      [
        'start=2026-11-29T00:00:00Z&end=2026-11-30T00:00:00Z',
        1,
        '2026-11-29T00:00:00.000Z',
        '2026-11-30T00:00:00.000Z',
      ],
      // No hour starts in an empty window on the hour.
      [
        'start=2026-11-28T10:00:00Z&end=2026-11-28T10:00:00Z',
        0,
        '2026-11-28T10:00:00.000Z',
        '2026-11-28T10:00:00.000Z',
      ],
    ]

    for (const [window, requests, start, end] of cases) {
      // Act
      const answer = await report(`project=${project}&${window}`)

      // Assess
      expect([window, answer.total.requests, answer.start, answer.end]).toEqual([window, requests, start, end])
    }
  })

  it('defaults to the 24 hour buckets ending with the one that holds `end`', async () => {
    // Prepare: the hour 24 buckets before 10:30's, the first of the 24, and the last
    const project = await meter([
      { at: '2026-11-27T10:59:00Z' },
      { at: '2026-11-27T11:00:00Z' },
      { at: '2026-11-28T10:29:00Z' },
    ])

    // Act
    const given = await report(`project=${project}&end=2026-11-28T10:30:00Z`)
    const before = Date.now()
    const now = await report(`project=${project}`)
    const after = Date.now()

    // Assess
    expect(given.start).toBe('2026-11-27T11:00:00.000Z')
    expect(given.data.map((r) => r.hour)).toEqual(['2026-11-27T11:00:00Z', '2026-11-28T10:00:00Z'])
    const end = Date.parse(now.end)
    expect(end).toBeGreaterThanOrEqual(before)
    expect(end).toBeLessThanOrEqual(after)
    expect(Date.parse(now.start)).toBe(Math.ceil(end / 3_600_000) * 3_600_000 - 24 * 3_600_000)
  })

  it('serves the path with a trailing slash', async () => {
    // Act
    const res = await app.request('/v1/usage/?start=0&end=3600', { headers: caller.bearer })

    // Assess
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ object: 'usage', start: '1970-01-01T00:00:00.000Z', data: [] })
  })

  it('refuses a parameter given more than once with 400 saying which', async () => {
    for (const name of ['start', 'end', 'project']) {
      // Prepare
      const value = name === 'project' ? `${caller.entity}/alpha` : '2026-11-28T00:00:00Z'

      // Act
      const res = await app.request(`/v1/usage?${name}=a&${name}=${value}`, { headers: caller.bearer })

      // Assess
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({
        error: { message: `\`${name}\` was given more than once`, type: 'BadRequestError', param: name, code: 400 },
      })
    }
  })

  it('rounds costs to 12 significant digits and totals every count the rows have', async () => {
    // Prepare: 0.1 + 0.2 USD in one hour (0.30000000000000004 in binary), an aborted request with cached tokens
    const project = await meter(
      [
        { at: '2026-11-28T10:05:00Z', prompt: 10, completion: 0 },
        { at: '2026-11-28T10:06:00Z', prompt: 20, completion: 0, cached: 4 },
        { at: '2026-11-28T11:06:00Z', prompt: 10, completion: 2, aborted: true, cached: 3 },
      ],
      { prompt: 0.01, completion: 0.02 },
    )

    // Act
    const answer = await report(`project=${project}&start=2026-11-28T00:00:00Z&end=2026-11-29T00:00:00Z`)

    // Assess
    expect(answer.data.map((r) => r.cost_usd)).toEqual([0.3, 0.14])
    expect(answer.total).toEqual({
      requests: 3,
      aborted_requests: 1,
      prompt_tokens: 40,
      completion_tokens: 2,
      cached_tokens: 7,
      total_tokens: 42,
      cost_usd: 0.44,
    })
  })
})
