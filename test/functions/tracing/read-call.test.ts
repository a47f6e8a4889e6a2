import { describe, expect, it } from 'vitest'
import { app as endApp } from '#functions/tracing/end-call/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app, handler } from '#functions/tracing/read-call/handler'
import { app as startApp } from '#functions/tracing/start-call/handler'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, endPart, newProject, startPart, writeCalls } from '../../support/calls.js'
import { restEvent } from '../../support/events.js'
import { invokeLambda } from '../../support/lambda-invoke.js'

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

  it('counts an end that arrived before its start in total_storage_size_bytes (docs/tracing.md §7.1, §7.6)', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const other = newProject(caller)
    const send = async (target: typeof app, path: string, body: unknown) => {
      const res = await target.request(path, jsonInit(body, caller.basic))
      expect(res.status).toBe(200)
      return res
    }
    const root = startPart(project)
    const rootRes = await send(startApp, '/call/start', { start: root })
    const { trace_id: traceId } = (await rootRes.json()) as { trace_id: string }
    await send(endApp, '/call/end', { end: endPart(project, root.id as string) })
    const child = startPart(project, { trace_id: traceId, parent_id: root.id })
    // Ends carry no trace id, so this one is stored before anything names its trace.
    await send(endApp, '/call/end', { end: endPart(project, child.id as string, { output: 'x'.repeat(1000) }) })
    await send(startApp, '/call/start', { start: child })
    // Same call ids in another project of the same entity: never part of this trace.
    await send(endApp, '/call/end', { end: endPart(other, child.id as string, { output: 'y'.repeat(5000) }) })
    await send(startApp, '/call/start', { start: startPart(other, { id: root.id, trace_id: traceId }) })

    // Act
    const read = await send(app, '/call/read', { project_id: project, id: root.id, include_total_storage_size: true })
    const stats = await send(statsApp, '/calls/query_stats', {
      project_id: project,
      filter: { trace_roots_only: true },
      include_total_storage_size: true,
    })

    // Assess
    const rootSize = 2 + 2 + 4 + 2 // {} attributes, {} inputs, null output, {} summary
    const childSize = 2 + 2 + 1002 + 2
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call.total_storage_size_bytes).toBe(rootSize + childSize)
    expect(await stats.json()).toEqual({ count: 1, has_more: false, total_storage_size_bytes: rootSize + childSize })
  })

  it("sizes each JSON column as Python's json.dumps of the stored value (docs/tracing.md §7.6)", async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const inputs = { x: 5, s: 'é', p: 1e-7, q: 0.5, api_key: 'sk-secret-1234' }
    const start = startPart(project, { attributes: { env: 'prod' }, inputs })
    const summary = { usage: { 'gpt-4': { requests: 1 } } }
    const end = endPart(project, start.id as string, { output: { y: 1, z: [1, 'ü'] }, summary })
    await writeCalls(caller, [{ start, end }])

    // Act
    const res = await app.request(
      '/call/read',
      jsonInit(
        { project_id: project, id: start.id, include_storage_size: true, include_total_storage_size: true },
        caller.basic,
      ),
    )

    // Assess
    // len(json.dumps(v)) in Python: {"env": "prod"} 15; {"x": 5, "s": "\u00e9", "p": 1e-07, "q": 0.5, "api_key":
    // "REDACTED"} 68 (the stored, redacted value); {"y": 1, "z": [1, "\u00fc"]} 28; the summary 37.
    const { call } = (await res.json()) as { call: Record<string, unknown> }
    expect(call.storage_size_bytes).toBe(15 + 68 + 28 + 37)
    expect(call.total_storage_size_bytes).toBe(15 + 68 + 28 + 37)
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
  it('works when invoked as a Lambda behind the REST authorizer, streaming its answer', async () => {
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
    const result = await invokeLambda(handler, event)

    // Assess
    expect(result).toMatchObject({ streamed: true, statusCode: 200 })
    expect(JSON.parse(result.body)).toEqual({ call: null })
  })
})
