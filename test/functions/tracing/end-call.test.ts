import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/tracing/end-call/handler'
import { app as readApp } from '#functions/tracing/read-call/handler'
import { app as startApp } from '#functions/tracing/start-call/handler'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, endPart, newProject, startPart } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

describe('POST /call/end', () => {
  it('ends a call; stored derived summary keys are replaced and status_counts errors give descendant_error', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { started_at: '2025-01-01T00:00:00.000500Z' })
    await startApp.request('/call/start', jsonInit({ start }, caller.basic))
    const end = endPart(project, start.id as string, {
      ended_at: '2025-01-01T00:00:00.750Z',
      output: [1, 'two'],
      summary: { status_counts: { error: 2 }, weave: { status: 'success', latency_ms: 1, extra: 'kept' } },
    })

    // Act
    const res = await app.request('/call/end', jsonInit({ end }, caller.basic))
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))

    // Assess
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({})
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call.output).toEqual([1, 'two'])
    expect(call.started_at).toBe('2025-01-01T00:00:00.000500Z')
    expect(call.summary).toEqual({
      status_counts: { error: 2 },
      weave: { extra: 'kept', status: 'descendant_error', trace_name: 'my_op', latency_ms: 750 },
    })
  })

  it('answers 422 without a summary', async () => {
    const caller = await newCaller()
    const project = newProject(caller)
    const { summary: _, ...end } = endPart(project, 'x')
    expect((await app.request('/call/end', jsonInit({ end }, caller.basic))).status).toBe(422)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/call/end',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ end: endPart(project, 'c1') }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({})
  })
})
