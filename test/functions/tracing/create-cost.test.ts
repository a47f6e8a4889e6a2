import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/tracing/create-cost/handler'
import { app as queryApp } from '#functions/tracing/query-cost/handler'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, newProject } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

describe('POST /cost/create', () => {
  it('stores project prices with defaults and returns [llm_id, id] pairs', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const costs = {
      'my-model': { prompt_token_cost: 1e-6, completion_token_cost: 2e-6, effective_date: '2025-02-01T00:00:00Z' },
    }

    // Act
    const res = await app.request(
      '/cost/create',
      jsonInit({ project_id: project, costs, wb_user_id: 'spoof' }, caller.basic),
    )
    const query = await queryApp.request('/cost/query', jsonInit({ project_id: project }, caller.basic))

    // Assess
    expect(res.status).toBe(200)
    const { ids } = (await res.json()) as { ids: [string, string][] }
    expect(ids).toHaveLength(1)
    expect(ids[0]?.[0]).toBe('my-model')
    expect(await query.json()).toEqual({
      results: [
        {
          id: ids[0]?.[1],
          llm_id: 'my-model',
          prompt_token_cost: 1e-6,
          completion_token_cost: 2e-6,
          cache_read_input_token_cost: 0,
          cache_creation_input_token_cost: 0,
          prompt_token_cost_unit: 'USD',
          completion_token_cost_unit: 'USD',
          effective_date: '2025-02-01T00:00:00Z',
          provider_id: 'default',
        },
      ],
    })
  })

  it('reads a numeric effective_date as pydantic does (milliseconds above 2e10) and answers 422 out of range', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const price = { prompt_token_cost: 1, completion_token_cost: 1 }
    const create = (effective_date: number) =>
      app.request(
        '/cost/create',
        jsonInit({ project_id: project, costs: { m: { ...price, effective_date } } }, caller.basic),
      )

    // Act
    const millis = await create(1_738_368_000_000)
    const tooLate = await create(1e16)
    const query = await queryApp.request('/cost/query', jsonInit({ project_id: project }, caller.basic))

    // Assess
    expect(millis.status).toBe(200)
    expect(tooLate.status).toBe(422)
    expect(((await tooLate.json()) as { detail: { type: string; loc: unknown }[] }).detail[0]).toMatchObject({
      type: 'datetime_parsing',
      loc: ['body', 'costs', 'm', 'effective_date'],
    })
    const { results } = (await query.json()) as { results: { effective_date: string }[] }
    expect(results.map((r) => r.effective_date)).toEqual(['2025-02-01T00:00:00Z'])
  })

  it('answers 422 for a missing price and 403 for a foreign project', async () => {
    const caller = await newCaller()
    const stranger = await newCaller()
    const bad = await app.request(
      '/cost/create',
      jsonInit({ project_id: newProject(caller), costs: { m: {} } }, caller.basic),
    )
    const foreign = await app.request(
      '/cost/create',
      jsonInit(
        { project_id: newProject(caller), costs: { m: { prompt_token_cost: 1, completion_token_cost: 1 } } },
        stranger.basic,
      ),
    )
    expect(bad.status).toBe(422)
    expect(foreign.status).toBe(403)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/cost/create',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project, costs: {} }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ ids: [] })
  })

  it('adds nothing for a retry carrying the first attempt X-Weave-Retry-Id, and new rows for a new request', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const body = {
      project_id: project,
      costs: {
        a: { prompt_token_cost: 1, completion_token_cost: 2 },
        b: { prompt_token_cost: 3, completion_token_cost: 4 },
      },
    }
    const retry = { ...caller.basic, 'x-weave-retry-id': 'cost-retry-1' }

    // Act
    const first = await app.request('/cost/create', jsonInit(body, retry))
    const second = await app.request('/cost/create', jsonInit(body, retry))
    const afterRetry = await queryApp.request(
      '/cost/query',
      jsonInit({ project_id: project, fields: ['id', 'llm_id'] }, caller.basic),
    )
    const fresh = await app.request('/cost/create', jsonInit(body, caller.basic))
    const afterFresh = await queryApp.request(
      '/cost/query',
      jsonInit({ project_id: project, fields: ['id'] }, caller.basic),
    )

    // Assess
    const firstIds = ((await first.json()) as { ids: [string, string][] }).ids
    expect([first.status, second.status, fresh.status]).toEqual([200, 200, 200])
    expect(await second.json()).toEqual({ ids: firstIds })
    const rows = ((await afterRetry.json()) as { results: { id: string; llm_id: string }[] }).results
    expect(rows.map((r) => [r.llm_id, r.id]).sort()).toEqual([...firstIds].sort())
    expect(((await afterFresh.json()) as { results: unknown[] }).results).toHaveLength(4)
  })
})
