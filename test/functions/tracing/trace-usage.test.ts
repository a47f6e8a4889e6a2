import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as costApp } from '#functions/tracing/create-cost/handler'
import { app, handler } from '#functions/tracing/trace-usage/handler'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { authorizerFor, endPart, newProject, startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

const usage = (fields: Partial<Record<string, number | null>>) => ({
  requests: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  prompt_tokens_total_cost: null,
  completion_tokens_total_cost: null,
  cache_read_input_tokens_total_cost: null,
  cache_creation_input_tokens_total_cost: null,
  ...fields,
})

async function chain(caller: TestCaller, project: string, summaries: Record<string, unknown>[]) {
  const ids = summaries.map(() => randomUUID())
  const trace = randomUUID()
  await writeCalls(
    caller,
    summaries.map((summary, i) => ({
      start: startPart(project, {
        id: ids[i],
        trace_id: trace,
        parent_id: i === 0 ? null : ids[i - 1],
        started_at: `2025-01-01T00:00:0${i}Z`,
      }),
      end: endPart(project, ids[i] as string, { ended_at: `2025-01-01T00:00:0${i + 1}Z`, summary }),
    })),
  )
  return { ids, trace }
}

async function post(caller: TestCaller, body: Record<string, unknown>) {
  const res = await app.request('/trace/usage', jsonInit(body, caller.basic))
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('POST /trace/usage', () => {
  it('rolls usage up through descendants (contract example)', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { ids, trace } = await chain(caller, project, [
      { usage: { 'gpt-4': { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } } },
      { usage: { 'gpt-4': { input_tokens: 2, output_tokens: 1 } } },
      { usage: { 'gpt-4': { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } } },
    ])
    const [root, child, leaf] = ids as [string, string, string]

    // Act
    const res = await post(caller, { project_id: project, filter: { trace_ids: [trace] } })

    // Assess
    expect(res).toEqual({
      status: 200,
      body: {
        call_usage: {
          [root]: { 'gpt-4': usage({ prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 }) },
          [child]: { 'gpt-4': usage({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }) },
          [leaf]: { 'gpt-4': usage({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }) },
        },
        unfinished_call_ids: [],
      },
    })
  })

  it("reads counts as Weave's _safe_int (Python int()): numeric strings with spaces, underscores or other scripts' digits", async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const counts = {
      prompt_tokens: '1_0',
      input_tokens: ' 7 ',
      completion_tokens: '٣',
      output_tokens: 2.9,
      requests: true,
      cache_read_input_tokens: '1.5',
      cache_creation_input_tokens: [4],
    }
    const { ids, trace } = await chain(caller, project, [{ usage: { 'gpt-4': counts } }])

    // Act
    const res = await post(caller, { project_id: project, filter: { trace_ids: [trace] } })

    // Assess: int("1_0") + int(" 7 ") = 17, int("٣") + int(2.9) = 5, int(True) = 1; "1.5" and a list are refused → 0
    expect(res.body.call_usage).toEqual({
      [ids[0] as string]: {
        'gpt-4': usage({ requests: 1, prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 }),
      },
    })
  })

  it('adds costs from the price table when include_costs is set (contract example)', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    await costApp.request(
      '/cost/create',
      jsonInit(
        {
          project_id: project,
          costs: { m: { prompt_token_cost: 0.1, completion_token_cost: 0.05, effective_date: '2024-01-01T00:00:00Z' } },
        },
        caller.basic,
      ),
    )
    const { ids } = await chain(caller, project, [
      { usage: { m: { prompt_tokens: 5, completion_tokens: 4 }, other: { prompt_tokens: 1 } } },
      { usage: { m: { prompt_tokens: 1, completion_tokens: 1 } } },
    ])
    const [root, child] = ids as [string, string]

    // Act
    const res = await post(caller, { project_id: project, include_costs: true })

    // Assess
    const cost = (p: number, c: number) => ({
      prompt_tokens_total_cost: p,
      completion_tokens_total_cost: c,
      cache_read_input_tokens_total_cost: 0,
      cache_creation_input_tokens_total_cost: 0,
    })
    expect(res.body.call_usage).toEqual({
      [root]: {
        m: usage({ prompt_tokens: 6, completion_tokens: 5, total_tokens: 11, ...cost(0.6, 0.25) }),
        other: usage({ prompt_tokens: 1, total_tokens: 1, ...cost(0, 0) }),
      },
      [child]: { m: usage({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, ...cost(0.1, 0.05) }) },
    })
  })

  it('treats parents outside the selection as roots, lists unfinished calls and keys calls without usage', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { ids } = await chain(caller, project, [
      { usage: { a: { prompt_tokens: 1, completion_tokens: 1 } } },
      { usage: { a: { prompt_tokens: 2, completion_tokens: 2 } } },
      {},
    ])
    const [root, child, leaf] = ids as [string, string, string]
    const open = randomUUID()
    await writeCalls(caller, [
      { start: startPart(project, { id: open, parent_id: leaf, started_at: '2025-01-01T00:00:09Z' }) },
    ])

    // Act
    const res = await post(caller, { project_id: project, filter: { call_ids: [child, leaf, open] } })

    // Assess
    expect(res.body).toEqual({
      call_usage: {
        [child]: { a: usage({ prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 }) },
        [leaf]: {},
        [open]: {},
      },
      unfinished_call_ids: [open],
    })
    expect(root).toBeTruthy()
  })

  it('silently truncates the selection at limit', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { ids } = await chain(caller, project, [{}, { usage: { a: { prompt_tokens: 7 } } }])

    // Act
    const res = await post(caller, { project_id: project, limit: 1 })

    // Assess
    expect(res.body).toEqual({ call_usage: { [ids[0] as string]: {} }, unfinished_call_ids: [] })
  })

  it('truncates at limit in started_at order across the sharded timeline', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const calls = Array.from({ length: 24 }, (_, i) => ({ id: randomUUID(), second: String(i).padStart(2, '0') }))
    await writeCalls(
      caller,
      [...calls]
        .reverse()
        .map((c) => ({ start: startPart(project, { id: c.id, started_at: `2025-01-01T00:00:${c.second}Z` }) })),
    )

    // Act
    const res = await post(caller, { project_id: project, limit: 5 })

    // Assess
    expect(Object.keys(res.body.call_usage as object)).toEqual(calls.slice(0, 5).map((c) => c.id))
    expect(res.body.unfinished_call_ids).toEqual(
      calls
        .slice(0, 5)
        .map((c) => c.id)
        .sort(),
    )
  })

  it('answers 400 for a negative limit, as the calls query it selects with', async () => {
    // Prepare
    const caller = await newCaller()

    // Act
    const res = await post(caller, { project_id: newProject(caller), limit: -1 })

    // Assess
    expect(res).toEqual({ status: 400, body: { reason: 'Limit must be a positive integer' } })
  })

  it('answers 422 for a bad body and 403 for a foreign project', async () => {
    const caller = await newCaller()
    const stranger = await newCaller()
    expect((await post(caller, { project_id: newProject(caller), limit: 'x' })).status).toBe(422)
    expect((await post(caller, { project_id: newProject(caller), query: { $expr: {} } })).status).toBe(422)
    expect((await post(stranger, { project_id: newProject(caller) })).status).toBe(403)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/trace/usage',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ call_usage: {}, unfinished_call_ids: [] })
  })
})
