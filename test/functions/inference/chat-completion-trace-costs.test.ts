import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { app as usageApp } from '#functions/inference/get-usage/handler'
import { app as costApp } from '#functions/tracing/create-cost/handler'
import { app as traceUsageApp } from '#functions/tracing/trace-usage/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { clearCatalogCache } from '#shared/inference/catalog'
import { flushUsage } from '#shared/inference/usage-meter'
import { jsonInit, newCaller } from '../../support/auth.js'

// The catalog's prices, and the same rates given to the project's traces through `cost/create` (docs/prices.md).
const PRICES = { prompt: 1e-6, completion: 2e-6, cached: 1e-7 }
const COSTS = { prompt_token_cost: 1e-6, completion_token_cost: 2e-6, cache_read_input_token_cost: 1e-7 }

const caller = await newCaller()
// The reference engine caches prompt prefixes in 16-token blocks and reports the cached tokens of a repeated prompt.
const model = referenceCatalogModel({ id: `loom/priced-${randomUUID().slice(0, 8)}`, prices: PRICES })
await putModel(model)
clearCatalogCache()

// Long enough for several cached blocks, short completions.
const body = {
  model: model.id,
  messages: [{ role: 'user', content: `Remember this: ${'the weaver and the river. '.repeat(8)}` }],
  max_completion_tokens: 8,
  seed: 1,
}

type Usage = {
  cache_read_input_tokens: number
  prompt_tokens_total_cost: number
  completion_tokens_total_cost: number
  cache_read_input_tokens_total_cost: number
  cache_creation_input_tokens_total_cost: number
}

async function traceUsage(projectId: string) {
  const res = await traceUsageApp.request(
    '/trace/usage',
    jsonInit({ project_id: projectId, include_costs: true }, caller.basic),
  )
  const { call_usage } = (await res.json()) as { call_usage: Record<string, Record<string, Usage>> }
  const usages = Object.values(call_usage).map((byModel) => byModel[model.id] as Usage)
  const sum = (f: (u: Usage) => number) => usages.reduce((n, u) => n + f(u), 0)
  return {
    calls: usages.length,
    cached: sum((u) => u.cache_read_input_tokens),
    cost: sum(
      (u) =>
        u.prompt_tokens_total_cost +
        u.completion_tokens_total_cost +
        u.cache_read_input_tokens_total_cost +
        u.cache_creation_input_tokens_total_cost,
    ),
  }
}

describe('costs of traced gateway completions', () => {
  it('prices cached prompt tokens in the trace as the meter does: with equal prices the costs are equal', async () => {
    // Prepare
    const projectId = `${caller.entity}/trace-costs-${Date.now()}`
    const created = await costApp.request(
      '/cost/create',
      jsonInit(
        { project_id: projectId, costs: { [model.id]: { ...COSTS, effective_date: '2025-01-01T00:00:00Z' } } },
        caller.basic,
      ),
    )
    const headers = { ...caller.bearer, 'OpenAI-Project': projectId }

    // Act: the same prompt three times, the last streamed; the later two find its prefix cached.
    for (const stream of [false, false, true]) {
      const res = await app.request('/v1/chat/completions', jsonInit({ ...body, stream }, headers))
      await res.text()
    }
    await flushUsage()
    await settleAfterResponse()
    const metered = await usageApp.request(`/v1/usage?project=${projectId}`, { headers: caller.bearer })
    const report = (await metered.json()) as { data: { cached_tokens: number }[]; total: { cost_usd: number } }
    const traced = await traceUsage(projectId)

    // Assess
    expect(created.status).toBe(200)
    const cached = report.data.reduce((n, row) => n + row.cached_tokens, 0)
    expect(cached).toBeGreaterThan(0)
    expect(traced.calls).toBe(3)
    expect(traced.cached).toBe(cached)
    expect(traced.cost).toBeCloseTo(report.total.cost_usd, 12)
  })
})
