import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { app as costApp } from '#functions/tracing/create-cost/handler'
import { app as readApp } from '#functions/tracing/read-call/handler'
import { app as usageApp } from '#functions/tracing/trace-usage/handler'
import { config } from '#shared/config'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { endPart, newProject, startPart, writeCalls } from '../../support/calls.js'

// This file loads fresh copies of modules; the worker's next file starts from a clean registry (test files share
// their worker: vitest.config.ts, `isolate: false`).
afterAll(() => {
  vi.resetModules()
})

type Cost = Record<string, number | string>
const dir = mkdtempSync(join(tmpdir(), 'loom-prices-'))

afterAll(() => rmSync(dir, { recursive: true, force: true }))
beforeEach(() => {
  vi.unstubAllEnvs()
})

/** A fresh costs module reading `LOOM_PRICES_FILE` (its config copy gets this suite's table through the environment). */
async function costsModuleWith(pricesFile: string) {
  vi.stubEnv('DYNAMODB_ENDPOINT', config.dynamoEndpoint ?? '')
  vi.stubEnv('LOOM_TABLE_NAME', config.tableName ?? '')
  vi.stubEnv('LOOM_PRICES_FILE', pricesFile)
  vi.resetModules()
  return import('#shared/tracing/costs')
}

/** One finished call using `usage`, started at `startedAt`; returns its id. */
async function callWith(caller: TestCaller, project: string, usage: Record<string, unknown>, startedAt: string) {
  const start = startPart(project, { started_at: startedAt })
  const end = endPart(project, start.id as string, { ended_at: startedAt, summary: { usage } })
  await writeCalls(caller, [{ start, end }])
  return start.id as string
}

async function costsOf(caller: TestCaller, project: string, id: string): Promise<Record<string, Cost>> {
  const res = await readApp.request(
    '/call/read',
    jsonInit({ project_id: project, id, include_costs: true }, caller.basic),
  )
  expect(res.status).toBe(200)
  const { call } = (await res.json()) as { call: { summary: { weave: { costs: Record<string, Cost> } } } }
  return call.summary.weave.costs
}

describe('default prices, with no cost/create', () => {
  it('price dated OpenAI and Anthropic model names in call/read and trace/usage', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const usage = {
      'gpt-4o-mini-2024-07-18': { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, requests: 1 },
      'claude-3-5-sonnet-20241022': { input_tokens: 1_000_000, output_tokens: 1_000_000, requests: 1 },
    }
    const id = await callWith(caller, project, usage, '2026-01-01T00:00:00Z')

    // Act
    const costs = await costsOf(caller, project, id)
    const res = await usageApp.request(
      '/trace/usage',
      jsonInit({ project_id: project, include_costs: true }, caller.basic),
    )

    // Assess
    expect(costs['gpt-4o-mini-2024-07-18']).toMatchObject({
      prompt_token_cost: 1.5e-7,
      completion_token_cost: 6e-7,
      prompt_tokens_total_cost: 0.15,
      completion_tokens_total_cost: 0.6,
      provider_id: 'openai',
      pricing_level: 'default',
      pricing_level_id: 'default',
      created_by: 'system',
    })
    expect(costs['claude-3-5-sonnet-20241022']).toMatchObject({
      prompt_tokens: 1_000_000,
      prompt_token_cost: 3e-6,
      completion_token_cost: 1.5e-5,
      prompt_tokens_total_cost: 3,
      completion_tokens_total_cost: 15,
      provider_id: 'anthropic',
    })
    const { call_usage } = (await res.json()) as { call_usage: Record<string, Record<string, Cost>> }
    expect(call_usage[id]?.['gpt-4o-mini-2024-07-18']).toMatchObject({
      prompt_tokens_total_cost: 0.15,
      completion_tokens_total_cost: 0.6,
    })
    expect(call_usage[id]?.['claude-3-5-sonnet-20241022']?.completion_tokens_total_cost).toBeCloseTo(15)
  })

  it('choose the newest price in effect when the call started; before the first, the newest one', async () => {
    // Prepare: the table's history of claude-3-5-haiku-20241022 (LiteLLM changed it on 2025-02-28)
    const caller = await newCaller()
    const project = newProject(caller)
    const usage = { 'claude-3-5-haiku-20241022': { input_tokens: 1_000_000, output_tokens: 1_000_000 } }
    const early = await callWith(caller, project, usage, '2025-02-10T00:00:00Z')
    const later = await callWith(caller, project, usage, '2025-03-10T00:00:00Z')
    const before = await callWith(caller, project, usage, '2024-06-01T00:00:00Z')

    // Act
    const [e, l, b] = (await Promise.all([early, later, before].map((id) => costsOf(caller, project, id)))) as [
      Record<string, Cost>,
      Record<string, Cost>,
      Record<string, Cost>,
    ]

    // Assess
    expect(e['claude-3-5-haiku-20241022']).toMatchObject({ prompt_token_cost: 1e-6, completion_token_cost: 5e-6 })
    expect(e['claude-3-5-haiku-20241022']?.effective_date).toBe('2025-02-06T02:56:03Z')
    expect(l['claude-3-5-haiku-20241022']).toMatchObject({ prompt_token_cost: 8e-7, completion_token_cost: 4e-6 })
    expect(l['claude-3-5-haiku-20241022']?.effective_date).toBe('2025-02-28T05:07:43Z')
    // Every row is in the future of this call: the reference then takes the newest (is_future ranks first).
    expect(b['claude-3-5-haiku-20241022']?.effective_date).toBe('2025-04-09T00:32:29Z')
  })

  it('yield to a project price from cost/create', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const usage = { 'gpt-4o-mini-2024-07-18': { prompt_tokens: 1000, completion_tokens: 1000 } }
    const id = await callWith(caller, project, usage, '2026-01-01T00:00:00Z')
    const created = await costApp.request(
      '/cost/create',
      jsonInit(
        {
          project_id: project,
          costs: {
            'gpt-4o-mini-2024-07-18': {
              prompt_token_cost: 0.01,
              completion_token_cost: 0.02,
              effective_date: '2025-01-01T00:00:00Z',
            },
          },
        },
        caller.basic,
      ),
    )
    expect(created.status).toBe(200)

    // Act
    const costs = await costsOf(caller, project, id)

    // Assess
    expect(costs['gpt-4o-mini-2024-07-18']).toMatchObject({
      prompt_token_cost: 0.01,
      completion_token_cost: 0.02,
      prompt_tokens_total_cost: 10,
      completion_tokens_total_cost: 20,
      pricing_level: 'project',
      pricing_level_id: project,
    })
  })

  it('are replaced by the table LOOM_PRICES_FILE names', async () => {
    // Prepare
    const file = join(dir, 'prices.json')
    writeFileSync(
      file,
      JSON.stringify({
        effective_date: '2024-01-01 00:00:00',
        rows: [
          ['house-model', 'loom', 0.001, 0.002],
          ['house-model', 'loom', 0.003, 0.004, 0.0001, 0, '2025-06-01 00:00:00'],
        ],
      }),
    )
    const { choosePrice, loadPrices } = await costsModuleWith(file)
    const project = newProject(await newCaller())

    // Act
    const book = await loadPrices(project)

    // Assess
    expect(book.forModel('gpt-4o-mini-2024-07-18')).toEqual([])
    expect(book.forModel('house-model')).toHaveLength(2)
    expect(choosePrice(book.forModel('house-model'), 'house-model', '2025-01-01T00:00:00.000000Z')).toMatchObject({
      prompt_token_cost: 0.001,
      provider_id: 'loom',
    })
    expect(choosePrice(book.forModel('house-model'), 'house-model', '2025-07-01T00:00:00.000000Z')).toMatchObject({
      prompt_token_cost: 0.003,
      cache_read_input_token_cost: 0.0001,
      effective_date: '2025-06-01T00:00:00.000000Z',
    })
  })

  it('fail loudly on a broken table instead of pricing calls at 0, with a 503 naming the variable, not a bare 500', async () => {
    // Prepare
    const file = join(dir, 'broken.json')
    writeFileSync(file, JSON.stringify({ effective_date: '2024-01-01 00:00:00', rows: [['m', 'p', 'free', 0]] }))
    const { loadPrices } = await costsModuleWith(file)

    // Act
    const failure: Error & { statusCode?: number } = await loadPrices(newProject(await newCaller())).then(
      () => new Error('loaded'),
      (error: unknown) => error as Error,
    )

    // Assess
    expect(failure.statusCode).toBe(503)
    expect(failure.message).toBe('The price table is misconfigured: LOOM_PRICES_FILE cannot be loaded')
    expect(failure).toMatchObject({ headers: { 'x-should-retry': 'false' } })
    expect((failure.cause as Error).message).toBe(`${file}: bad row 0: ["m","p","free",0]`)
  })

  it('name a syntax error in the table by line and column, never quoting its text, cause included', async () => {
    // Prepare
    const file = join(dir, 'not-json.json')
    // Something pasted unquoted into a row: Node's JSON.parse message would quote it.
    writeFileSync(
      file,
      '{"effective_date": "2024-01-01 00:00:00",\n "rows": [["m", "p", sk-live-0123456789abcdef, 0]]}',
    )
    const { loadPrices } = await costsModuleWith(file)

    // Act
    const failure = await loadPrices(newProject(await newCaller())).then(
      () => new Error('loaded'),
      (error: unknown) => error as Error,
    )

    // Assess
    expect(failure.message).toBe('The price table is misconfigured: LOOM_PRICES_FILE cannot be loaded')
    expect((failure.cause as Error).message).toBe(`${file} is not valid JSON (line 2, column 22)`)
    expect(inspect(failure, { depth: 12 })).not.toContain('sk-live')
  })
})
