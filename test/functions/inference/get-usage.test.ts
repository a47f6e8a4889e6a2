import '../../support/lambda-shim.js'
import { describe, expect, it } from 'vitest'
import { app as chatApp } from '#functions/inference/create-chat-completion/handler'
import { app } from '#functions/inference/get-usage/handler'
import { flushUsage } from '#shared/inference/usage-meter'
import { jsonInit } from '../../support/auth.js'
import { upstreamModelFixture } from '../../support/models.js'

const { caller, model } = await upstreamModelFixture(() => ({ prices: { prompt: 0.001, completion: 0.002 } }))

type Report = {
  entity: string
  project: string | null
  data: {
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
})
