import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-cost/handler'
import { app, handler } from '#functions/tracing/query-cost/handler'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, newProject } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

const COST = { prompt_token_cost: 1, completion_token_cost: 2 }

describe('POST /cost/query', () => {
  it('filters with the query language, sorts, pages and projects fields', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const costs = {
      a: { prompt_token_cost: 1, completion_token_cost: 1 },
      b: { prompt_token_cost: 3, completion_token_cost: 1 },
      c: { prompt_token_cost: 2, completion_token_cost: 1 },
    }
    await createApp.request('/cost/create', jsonInit({ project_id: project, costs }, caller.basic))
    const body = {
      project_id: project,
      fields: ['llm_id', 'prompt_token_cost'],
      query: { $expr: { $gt: [{ $getField: 'prompt_token_cost' }, { $literal: 1 }] } },
      sort_by: [{ field: 'prompt_token_cost', direction: 'desc' }],
    }

    // Act
    const all = await app.request('/cost/query', jsonInit(body, caller.basic))
    const paged = await app.request('/cost/query', jsonInit({ ...body, limit: 1, offset: 1 }, caller.basic))

    // Assess
    expect(await all.json()).toEqual({
      results: [
        { llm_id: 'b', prompt_token_cost: 3 },
        { llm_id: 'c', prompt_token_cost: 2 },
      ],
    })
    expect(await paged.json()).toEqual({ results: [{ llm_id: 'c', prompt_token_cost: 2 }] })
  })

  it('answers 400 for a field the price table lacks and a negative limit or offset, with or without prices (QA)', async () => {
    // Prepare: Weave's ORM refuses these before running the query; Loom answered 200 (`[{}]`, inherited names such as
    // `constructor` accepted, an unknown sort field refused only when the project had prices, -1 read as 0).
    const caller = await newCaller()
    const empty = newProject(caller)
    const priced = newProject(caller)
    await createApp.request('/cost/create', jsonInit({ project_id: priced, costs: { m: COST } }, caller.basic))
    const bad: [Record<string, unknown>, string][] = [
      [{ fields: ['nope'] }, 'Unknown field: nope'],
      [{ fields: ['llm_id', 'constructor'] }, 'Unknown field: constructor'],
      [{ sort_by: [{ field: 'toString', direction: 'asc' }] }, 'Unknown field: toString'],
      [{ query: { $expr: { $eq: [{ $getField: 'nope' }, { $literal: 1 }] } } }, 'Unknown field: nope'],
      [{ limit: -1 }, 'Limit must be non-negative'],
      [{ offset: -1 }, 'Offset must be non-negative'],
    ]

    // Act
    const answers = []
    for (const project of [empty, priced]) {
      for (const [extra] of bad) {
        const res = await app.request('/cost/query', jsonInit({ project_id: project, ...extra }, caller.basic))
        answers.push([res.status, ((await res.json()) as { reason: string }).reason])
      }
    }
    const columns = await app.request(
      '/cost/query',
      jsonInit(
        {
          project_id: priced,
          fields: ['pricing_level', 'llm_id'],
          sort_by: [{ field: 'created_at', direction: 'asc' }],
        },
        caller.basic,
      ),
    )

    // Assess
    const expected = bad.map(([, reason]) => [400, reason])
    expect(answers).toEqual([...expected, ...expected])
    expect(await columns.json()).toEqual({ results: [{ llm_id: 'm' }] })
  })

  it('answers 422 for a malformed query', async () => {
    const caller = await newCaller()
    const res = await app.request(
      '/cost/query',
      jsonInit({ project_id: newProject(caller), query: { x: 1 } }, caller.basic),
    )
    expect(res.status).toBe(422)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/cost/query',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ results: [] })
  })
})
