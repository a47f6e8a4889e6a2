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

  it('reads a numeric ended_at as pydantic does (milliseconds above 2e10) and answers 422 out of range', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { started_at: 1_700_000_000 })
    await startApp.request('/call/start', jsonInit({ start }, caller.basic))
    const end = (ended_at: number) => endPart(project, start.id as string, { ended_at })

    // Act
    const tooLate = await app.request('/call/end', jsonInit({ end: end(1e16) }, caller.basic))
    const res = await app.request('/call/end', jsonInit({ end: end(1_700_000_000_750) }, caller.basic))
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))

    // Assess
    expect(tooLate.status).toBe(422)
    expect(((await tooLate.json()) as { detail: { type: string; loc: unknown }[] }).detail[0]).toMatchObject({
      type: 'datetime_parsing',
      loc: ['body', 'end', 'ended_at'],
    })
    expect(res.status).toBe(200)
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call.ended_at).toBe('2023-11-14T22:13:20.750000Z')
    expect((call.summary as { weave: { latency_ms: number } }).weave.latency_ms).toBe(750)
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
