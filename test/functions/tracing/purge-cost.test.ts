import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-cost/handler'
import { app, handler } from '#functions/tracing/purge-cost/handler'
import { app as queryApp } from '#functions/tracing/query-cost/handler'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { authorizerFor, newProject } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

async function seed(caller: TestCaller, project: string): Promise<Record<string, string>> {
  const costs = Object.fromEntries(['a', 'b', 'c'].map((m) => [m, { prompt_token_cost: 1, completion_token_cost: 1 }]))
  const res = await createApp.request('/cost/create', jsonInit({ project_id: project, costs }, caller.basic))
  return Object.fromEntries(((await res.json()) as { ids: [string, string][] }).ids)
}

async function models(caller: TestCaller, project: string): Promise<string[]> {
  const res = await queryApp.request('/cost/query', jsonInit({ project_id: project, fields: ['llm_id'] }, caller.basic))
  return ((await res.json()) as { results: { llm_id: string }[] }).results.map((r) => r.llm_id).sort()
}

const id = { $getField: 'id' }

describe('POST /cost/purge', () => {
  it('deletes by $eq, $in and $or of $eq on id', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const ids = await seed(caller, project)

    // Act
    const eq = await app.request(
      '/cost/purge',
      jsonInit({ project_id: project, query: { $expr: { $eq: [id, { $literal: ids.a }] } } }, caller.basic),
    )
    const afterEq = await models(caller, project)
    await app.request(
      '/cost/purge',
      jsonInit({ project_id: project, query: { $expr: { $in: [id, [{ $literal: ids.b }]] } } }, caller.basic),
    )
    const afterIn = await models(caller, project)
    await app.request(
      '/cost/purge',
      jsonInit({ project_id: project, query: { $expr: { $or: [{ $eq: [id, { $literal: ids.c }] }] } } }, caller.basic),
    )

    // Assess
    expect(eq.status).toBe(200)
    expect(await eq.json()).toEqual({})
    expect(afterEq).toEqual(['b', 'c'])
    expect(afterIn).toEqual(['c'])
    expect(await models(caller, project)).toEqual([])
  })

  it('answers 400 for a query that is not by id', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    await seed(caller, project)
    const query = { $expr: { $eq: [{ $getField: 'llm_id' }, { $literal: 'a' }] } }

    // Act
    const res = await app.request('/cost/purge', jsonInit({ project_id: project, query }, caller.basic))

    // Assess
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ reason: 'Can only purge costs by specifying one or more cost ids' })
    expect(await models(caller, project)).toEqual(['a', 'b', 'c'])
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/cost/purge',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({
        project_id: project,
        query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'x' }] } },
      }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({})
  })
})
