import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/tracing/calls-usage/handler'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { authorizerFor, endPart, newProject, startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

const usage = (prompt: number, completion: number) => ({
  requests: 0,
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  prompt_tokens_total_cost: null,
  completion_tokens_total_cost: null,
  cache_read_input_tokens_total_cost: null,
  cache_creation_input_tokens_total_cost: null,
})

// The contract's example: root (no usage) → child (2, 1) → leaf (3, 1), plus an unfinished child of root.
async function exampleTrace(caller: TestCaller, project: string) {
  const [root, child, leaf, open] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
  const trace = randomUUID()
  const s = (id: string, parent: string | null, sec: number) =>
    startPart(project, { id, trace_id: trace, parent_id: parent, started_at: `2025-01-01T00:00:0${sec}Z` })
  await writeCalls(caller, [
    { start: s(root, null, 0), end: endPart(project, root) },
    {
      start: s(child, root, 1),
      end: endPart(project, child, { summary: { usage: { m: { prompt_tokens: 2, completion_tokens: 1 } } } }),
    },
    {
      start: s(leaf, child, 2),
      end: endPart(project, leaf, { summary: { usage: { m: { prompt_tokens: 3, completion_tokens: 1 } } } }),
    },
    { start: s(open, root, 3) },
  ])
  return { root, child, leaf, open }
}

async function post(caller: TestCaller, body: Record<string, unknown>) {
  const res = await app.request('/calls/usage', jsonInit(body, caller.basic))
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('POST /calls/usage', () => {
  it.each([4, 5, 8])('gives complete usage of the requested calls with limit %i', async (limit) => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const t = await exampleTrace(caller, project)

    // Act
    const res = await post(caller, { project_id: project, call_ids: [t.root, t.child, t.root, 'unknown'], limit })

    // Assess
    expect(res).toEqual({
      status: 200,
      body: {
        call_usage: { [t.root]: { m: usage(5, 2) }, [t.child]: { m: usage(5, 2) }, unknown: {} },
        unfinished_call_ids: [t.open],
      },
    })
  })

  it('answers 413 when a single trace exceeds the limit', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const t = await exampleTrace(caller, project)

    // Act
    const res = await post(caller, { project_id: project, call_ids: [t.root], limit: 3 })

    // Assess
    expect(res).toEqual({ status: 413, body: { reason: 'Request too large' } })
  })

  it('splits several traces into batches under the limit', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const one = await exampleTrace(caller, project)
    const two = await exampleTrace(caller, project)

    // Act
    const res = await post(caller, { project_id: project, call_ids: [one.child, two.leaf], limit: 4 })

    // Assess
    expect(res.body).toEqual({
      call_usage: { [one.child]: { m: usage(5, 2) }, [two.leaf]: { m: usage(3, 1) } },
      unfinished_call_ids: [one.open, two.open].sort(),
    })
  })

  it('answers empty results for no ids and 400 for a limit below 1', async () => {
    const caller = await newCaller()
    const project = newProject(caller)
    expect((await post(caller, { project_id: project, call_ids: [] })).body).toEqual({
      call_usage: {},
      unfinished_call_ids: [],
    })
    expect(await post(caller, { project_id: project, call_ids: ['x'], limit: 0 })).toEqual({
      status: 400,
      body: { reason: 'Usage aggregation limit must be positive' },
    })
    expect((await post(caller, { project_id: project })).status).toBe(422)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/calls/usage',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project, call_ids: [] }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ call_usage: {}, unfinished_call_ids: [] })
  })
})
