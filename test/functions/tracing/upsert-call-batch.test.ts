import { describe, expect, it } from 'vitest'
import { app as readApp } from '#functions/tracing/read-call/handler'
import { app, handler } from '#functions/tracing/upsert-call-batch/handler'
import { readCallCount } from '#shared/db/call-counter'
import { getCallParts } from '#shared/db/call-repository'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, endPart, newProject, startPart } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

describe('POST /call/upsert_batch', () => {
  it('stores starts and ends in order, answers one result per item and merges the parts on read', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { trace_id: 't-1', inputs: { a: 1 }, wb_user_id: 'spoofed' })
    const end = endPart(project, start.id as string, {
      output: { ok: true },
      summary: { usage: { 'gpt-4': { total_tokens: 3 } } },
    })
    const batch = [
      { mode: 'start', req: { start } },
      { mode: 'end', req: { end: { ...end, display_name: 'ignored by contract' } } },
    ]

    // Act
    const res = await app.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))

    // Assess
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ res: [{ id: start.id, trace_id: 't-1' }, {}] })
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call).toMatchObject({
      id: start.id,
      trace_id: 't-1',
      inputs: { a: 1 },
      output: { ok: true },
      started_at: '2025-01-01T00:00:00Z',
      ended_at: '2025-01-01T00:00:01Z',
      wb_user_id: caller.userId,
      summary: {
        usage: { 'gpt-4': { total_tokens: 3 } },
        weave: { status: 'success', trace_name: 'my_op', latency_ms: 1000 },
      },
    })
  })

  it('counts a retried batch once and never duplicates its calls', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const starts = [startPart(project), startPart(project), startPart(project)]
    const batch = starts.map((start) => ({ mode: 'start', req: { start } }))

    // Act
    const first = await app.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))
    const retry = await app.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))

    // Assess
    expect(first.status).toBe(200)
    expect(retry.status).toBe(200)
    expect(await readCallCount(project)).toBe(3)
  })

  it('answers retried starts without trace_id with the stored trace_id and ends their calls in that trace', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { trace_id: _a, ...retried } = startPart(project)
    const { trace_id: _b, ...twice } = startPart(project)
    const first = await app.request(
      '/call/upsert_batch',
      jsonInit({ batch: [{ mode: 'start', req: { start: retried } }] }, caller.basic),
    )
    const stored = ((await first.json()) as { res: { id: string; trace_id: string }[] }).res[0]
    const batch = [
      { mode: 'start', req: { start: retried } },
      { mode: 'end', req: { end: endPart(project, retried.id as string) } },
      { mode: 'start', req: { start: twice } },
      { mode: 'start', req: { start: twice } },
    ]

    // Act
    const res = await app.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))
    const read = async (id: unknown) => {
      const r = await readApp.request('/call/read', jsonInit({ project_id: project, id }, caller.basic))
      return ((await r.json()) as { call: Record<string, unknown> }).call
    }

    // Assess
    const body = (await res.json()) as { res: { id: string; trace_id: string }[] }
    expect(body.res[0]).toEqual(stored)
    expect(body.res[2]).toEqual(body.res[3])
    expect(await read(retried.id)).toMatchObject({ trace_id: stored?.trace_id, ended_at: '2025-01-01T00:00:01Z' })
    const parts = await getCallParts(project, [retried.id as string], { parts: 'end' })
    expect(parts.get(retried.id as string)?.end?.trace_id).toBe(stored?.trace_id)
    expect((await read(twice.id)).trace_id).toBe(body.res[2]?.trace_id)
    expect(await readCallCount(project)).toBe(2)
  })

  it('accepts an end that arrives before its start', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { trace_id: 'tr' })
    const end = endPart(project, start.id as string, { exception: 'boom' })

    // Act
    await app.request('/call/upsert_batch', jsonInit({ batch: [{ mode: 'end', req: { end } }] }, caller.basic))
    await app.request('/call/upsert_batch', jsonInit({ batch: [{ mode: 'start', req: { start } }] }, caller.basic))
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))

    // Assess
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call.exception).toBe('boom')
    expect((call.summary as { weave: { status: string } }).weave.status).toBe('error')
  })

  it('stores inputs larger than 400 KB whole', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const text = 'x'.repeat(900_000)
    const start = startPart(project, { inputs: { text } })

    // Act
    const res = await app.request(
      '/call/upsert_batch',
      jsonInit({ batch: [{ mode: 'start', req: { start } }] }, caller.basic),
    )
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))

    // Assess
    expect(res.status).toBe(200)
    const { call } = (await read.json()) as { call: { inputs: { text: string } } }
    expect(call.inputs.text).toBe(text)
  })

  it('rejects a batch item of a foreign project with 403 and writes nothing', async () => {
    // Prepare
    const caller = await newCaller()
    const other = await newCaller()
    const mine = startPart(newProject(caller))
    const theirs = startPart(newProject(other))
    const batch = [
      { mode: 'start', req: { start: mine } },
      { mode: 'start', req: { start: theirs } },
    ]

    // Act
    const res = await app.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))

    // Assess
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ reason: `You do not have access to entity '${other.entity}'` })
    expect(await readCallCount(mine.project_id as string)).toBe(0)
  })

  it('answers 422 with detail for an unknown mode and for a missing started_at', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { started_at: _, ...noTime } = startPart(project)

    // Act
    const badMode = await app.request('/call/upsert_batch', jsonInit({ batch: [{ mode: 'x', req: {} }] }, caller.basic))
    const missing = await app.request(
      '/call/upsert_batch',
      jsonInit({ batch: [{ mode: 'start', req: { start: noTime } }] }, caller.basic),
    )
    const notJson = await app.request('/call/upsert_batch', { method: 'POST', headers: caller.basic, body: '{' })

    // Assess
    expect(badMode.status).toBe(422)
    expect(missing.status).toBe(422)
    expect(((await missing.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      'body',
      'batch',
      0,
      'req',
      'start',
      'started_at',
    ])
    expect(notJson.status).toBe(422)
  })

  it('answers 401 without credentials', async () => {
    const res = await app.request('/call/upsert_batch', jsonInit({ batch: [] }, {}))
    expect(res.status).toBe(401)
  })

  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const start = startPart(newProject(caller), { trace_id: 'lambda-trace' })
    const event = restEvent({
      method: 'POST',
      path: '/call/upsert_batch',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ batch: [{ mode: 'start', req: { start } }] }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ res: [{ id: start.id, trace_id: 'lambda-trace' }] })
  })
})

describe('POST /call/upsert_batch with a large batch', () => {
  it('writes 600 calls (1,200 parts) in one request and counts each once', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const starts = Array.from({ length: 600 }, () => startPart(project))
    const batch = starts.flatMap((start) => [
      { mode: 'start', req: { start } },
      { mode: 'end', req: { end: endPart(project, start.id as string) } },
    ])

    // Act
    const res = await app.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))

    // Assess
    expect(res.status).toBe(200)
    expect(((await res.json()) as { res: unknown[] }).res).toHaveLength(1200)
    expect(await readCallCount(project)).toBe(600)
  })

  it('reuses the ids it generated when the same batch is retried with the same X-Weave-Retry-Id', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { id: _a, trace_id: _t, ...anonymous } = startPart(project)
    const { id: _b, ...noId } = startPart(project, { trace_id: 'given-trace' })
    const named = startPart(project, { trace_id: 'named-trace' })
    const batch = [
      { mode: 'start', req: { start: anonymous } },
      { mode: 'start', req: { start: named } },
      { mode: 'start', req: { start: noId } },
    ]
    const retry = { ...caller.basic, 'x-weave-retry-id': 'batch-1' }

    // Act
    const first = await app.request('/call/upsert_batch', jsonInit({ batch }, retry))
    const second = await app.request('/call/upsert_batch', jsonInit({ batch }, retry))

    // Assess
    const a = (await first.json()) as { res: { id: string; trace_id: string }[] }
    expect(second.status).toBe(200)
    expect(await second.json()).toEqual(a)
    expect(a.res[1]).toEqual({ id: named.id, trace_id: named.trace_id })
    expect(a.res[2]?.trace_id).toBe('given-trace')
    expect(await readCallCount(project)).toBe(3)
  })

  it('treats an X-Weave-Retry-Id reused for a different batch as a new request, storing every call', async () => {
    // Prepare: a client reusing one retry id for different requests (the ids were keyed by the retry id alone: a
    // batch of another shape was a 500 on every attempt, one of the same shape had its calls dropped as retries)
    const caller = await newCaller()
    const project = newProject(caller)
    const anonymous = (op: string) => {
      const { id: _id, trace_id: _trace, ...start } = startPart(project, { op_name: `weave:///e/p/op/${op}:abc` })
      return { mode: 'start', req: { start } }
    }
    const retry = { ...caller.basic, 'x-weave-retry-id': 'reused' }
    const send = (batch: unknown[]) => app.request('/call/upsert_batch', jsonInit({ batch }, retry))

    // Act
    const first = await send([anonymous('a'), anonymous('b')])
    const sameShape = await send([anonymous('c'), anonymous('d')])
    const otherShape = await send([anonymous('e'), anonymous('f'), anonymous('g')])

    // Assess
    expect([first.status, sameShape.status, otherShape.status]).toEqual([200, 200, 200])
    const ids = [first, sameShape, otherShape].map(async (r) => ((await r.json()) as { res: { id: string }[] }).res)
    const all = (await Promise.all(ids)).flat().map((r) => r.id)
    expect(new Set(all).size).toBe(7)
    expect(await readCallCount(project)).toBe(7)
  })
})
