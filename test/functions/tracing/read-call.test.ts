import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/tracing/read-call/handler'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, endPart, newProject, startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

describe('POST /call/read', () => {
  it('prices usage from the default price table (contract example: gpt-4 → 60 and 240)', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project)
    const summary = { usage: { 'gpt-4': { prompt_tokens: 2_000_000, completion_tokens: 4_000_000, requests: 1 } } }
    await writeCalls(caller, [{ start, end: endPart(project, start.id as string, { summary }) }])

    // Act
    const res = await app.request(
      '/call/read',
      jsonInit({ project_id: project, id: start.id, include_costs: true }, caller.basic),
    )

    // Assess
    const { call } = (await res.json()) as { call: { summary: { weave: { costs: Record<string, unknown> } } } }
    expect(call.summary.weave.costs['gpt-4']).toMatchObject({
      prompt_tokens: 2_000_000,
      completion_tokens: 4_000_000,
      requests: 1,
      prompt_tokens_total_cost: 60,
      completion_tokens_total_cost: 240,
      prompt_token_cost: 3e-5,
      completion_token_cost: 6e-5,
      pricing_level: 'default',
      created_by: 'system',
    })
  })

  it('answers {call: null} for an unknown id and 403 for a foreign project', async () => {
    const caller = await newCaller()
    const stranger = await newCaller()
    const project = newProject(caller)
    const missing = await app.request('/call/read', jsonInit({ project_id: project, id: 'nope' }, caller.basic))
    expect(await missing.json()).toEqual({ call: null })
    expect((await app.request('/call/read', jsonInit({ project_id: project, id: 'x' }, stranger.basic))).status).toBe(
      403,
    )
    expect((await app.request('/call/read', jsonInit({ project_id: project }, caller.basic))).status).toBe(422)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/call/read',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project, id: 'nope' }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ call: null })
  })
})
