import { describe, expect, it } from 'vitest'
import { app as readApp } from '#functions/tracing/read-call/handler'
import { app, handler } from '#functions/tracing/start-call/handler'
import { readCallCount } from '#shared/db/call-counter'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, newProject, startPart } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('POST /call/start', () => {
  it('generates UUIDv7 id and trace_id when missing and records the authenticated user', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { id: _, ...start } = startPart(project, { wb_user_id: 'someone-else', display_name: 'My call' })

    // Act
    const res = await app.request('/call/start', jsonInit({ start }, caller.basic))
    const body = (await res.json()) as { id: string; trace_id: string }
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: body.id }, caller.basic))

    // Assess
    expect(res.status).toBe(200)
    expect(body.id).toMatch(UUID7)
    expect(body.trace_id).toMatch(UUID7)
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call).toMatchObject({ wb_user_id: caller.userId, display_name: 'My call', ended_at: null, output: null })
    expect(call.summary).toEqual({ weave: { status: 'running', display_name: 'My call' } })
  })

  it('is idempotent for a retried start with the same id', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { trace_id: 't' })

    // Act
    const first = await app.request('/call/start', jsonInit({ start }, caller.basic))
    const second = await app.request('/call/start', jsonInit({ start }, caller.basic))

    // Assess
    expect(await first.json()).toEqual({ id: start.id, trace_id: 't' })
    expect(await second.json()).toEqual({ id: start.id, trace_id: 't' })
    expect(await readCallCount(project)).toBe(1)
  })

  it('answers a retried start without trace_id with the trace_id its first attempt stored', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { trace_id: _, ...start } = startPart(project)

    // Act
    const first = await app.request('/call/start', jsonInit({ start }, caller.basic))
    const second = await app.request('/call/start', jsonInit({ start }, caller.basic))
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))

    // Assess
    const answer = (await first.json()) as { id: string; trace_id: string }
    expect(answer.id).toBe(start.id)
    expect(await second.json()).toEqual(answer)
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call.trace_id).toBe(answer.trace_id)
    expect(await readCallCount(project)).toBe(1)
  })

  it('keeps a started_at in years 0001..0099 as given', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { started_at: '0050-01-01T00:00:00Z' })

    // Act
    const res = await app.request('/call/start', jsonInit({ start }, caller.basic))
    const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))

    // Assess
    expect(res.status).toBe(200)
    const { call } = (await read.json()) as { call: Record<string, unknown> }
    expect(call.started_at).toBe('0050-01-01T00:00:00Z')
  })

  it('keeps a run step exactly and answers 422 for one below 0 or beyond 2^53 - 1, storing nothing', async () => {
    // Prepare: Weave stores run steps as UInt64; a step past 2^53 - 1 made the SDK's marshalling throw (a 500).
    const caller = await newCaller()
    const project = newProject(caller)
    const steps = [42, '7', Number.MAX_SAFE_INTEGER, -1, 9_007_199_254_740_994, 1e20, 2.5]
    const starts = steps.map((wb_run_step) => startPart(project, { wb_run_step }))

    // Act
    const statuses: number[] = []
    for (const start of starts)
      statuses.push((await app.request('/call/start', jsonInit({ start }, caller.basic))).status)
    const read = async (id: unknown) => {
      const res = await readApp.request('/call/read', jsonInit({ project_id: project, id }, caller.basic))
      return ((await res.json()) as { call: { wb_run_step: unknown } | null }).call?.wb_run_step
    }

    // Assess
    expect(statuses).toEqual([200, 200, 200, 422, 422, 422, 422])
    expect(await Promise.all(starts.map((s) => read(s.id)))).toEqual([
      42,
      7,
      Number.MAX_SAFE_INTEGER,
      undefined,
      undefined,
      undefined,
      undefined,
    ])
    expect(await readCallCount(project)).toBe(3)
  })

  it('reads a numeric started_at as pydantic does (milliseconds above 2e10) and answers 422 out of range', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const inSeconds = startPart(project, { started_at: 1_700_000_000 })
    const inMillis = startPart(project, { started_at: 3e10 })
    const modern = startPart(project, { started_at: 1.7e12 })
    const tooLate = startPart(project, { started_at: 1e16 })
    const read = async (id: unknown) => {
      const res = await readApp.request('/call/read', jsonInit({ project_id: project, id }, caller.basic))
      return ((await res.json()) as { call: { started_at: string } }).call.started_at
    }

    // Act
    const statuses = []
    for (const start of [inSeconds, inMillis, modern, tooLate]) {
      statuses.push((await app.request('/call/start', jsonInit({ start }, caller.basic))).status)
    }
    const rejected = await app.request('/call/start', jsonInit({ start: tooLate }, caller.basic))

    // Assess
    expect(statuses).toEqual([200, 200, 200, 422])
    expect(await read(inSeconds.id)).toBe('2023-11-14T22:13:20Z')
    expect(await read(inMillis.id)).toBe('1970-12-14T05:20:00Z')
    expect(await read(modern.id)).toBe('2023-11-14T22:13:20Z')
    expect(((await rejected.json()) as { detail: unknown }).detail).toEqual([
      {
        type: 'datetime_parsing',
        loc: ['body', 'start', 'started_at'],
        msg: 'Input should be a valid datetime, dates after 9999 are not supported as unix timestamps',
        input: 1e16,
        ctx: { error: 'dates after 9999 are not supported as unix timestamps' },
      },
    ])
    expect(await readCallCount(project)).toBe(3)
  })

  // Expected bodies are pydantic 2.13.4's for a `datetime` field (TypeAdapter(datetime).validate_json).
  it('rejects an impossible calendar date with pydantic 422 and reads numeric and date-only strings', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const numeric = startPart(project, { started_at: '1700000000.5' })
    const dateOnly = startPart(project, { started_at: '2024-02-29' })
    const impossible = startPart(project, { started_at: '2024-02-30T00:00:00Z' })
    const read = async (id: unknown) => {
      const res = await readApp.request('/call/read', jsonInit({ project_id: project, id }, caller.basic))
      return ((await res.json()) as { call: { started_at: string } }).call.started_at
    }

    // Act
    const accepted = [
      (await app.request('/call/start', jsonInit({ start: numeric }, caller.basic))).status,
      (await app.request('/call/start', jsonInit({ start: dateOnly }, caller.basic))).status,
    ]
    const rejected = await app.request('/call/start', jsonInit({ start: impossible }, caller.basic))

    // Assess
    expect(accepted).toEqual([200, 200])
    expect(await read(numeric.id)).toBe('2023-11-14T22:13:20.500000Z')
    expect(await read(dateOnly.id)).toBe('2024-02-29T00:00:00Z')
    expect(rejected.status).toBe(422)
    expect(((await rejected.json()) as { detail: unknown }).detail).toEqual([
      {
        type: 'datetime_from_date_parsing',
        loc: ['body', 'start', 'started_at'],
        msg: 'Input should be a valid datetime or date, day value is outside expected range',
        input: '2024-02-30T00:00:00Z',
        ctx: { error: 'day value is outside expected range' },
      },
    ])
    expect(await readCallCount(project)).toBe(2)
  })

  it('answers 422 for missing inputs and an invalid datetime, 403 for a foreign project', async () => {
    const caller = await newCaller()
    const stranger = await newCaller()
    const project = newProject(caller)
    const { inputs: _, ...noInputs } = startPart(project)
    expect((await app.request('/call/start', jsonInit({ start: noInputs }, caller.basic))).status).toBe(422)
    const badTime = startPart(project, { started_at: 'yesterday' })
    expect((await app.request('/call/start', jsonInit({ start: badTime }, caller.basic))).status).toBe(422)
    expect((await app.request('/call/start', jsonInit({ start: startPart(project) }, stranger.basic))).status).toBe(403)
    expect(await readCallCount(project)).toBe(0)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/call/start',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ start: startPart(project) }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toHaveProperty('trace_id')
  })

  it('gives a retry without a client id the same generated ids when it carries the same X-Weave-Retry-Id', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const { id: _id, trace_id: _trace, ...start } = startPart(project)
    const retry = { ...caller.basic, 'x-weave-retry-id': 'r-1' }

    // Act
    const first = await app.request('/call/start', jsonInit({ start }, retry))
    const second = await app.request('/call/start', jsonInit({ start }, retry))
    const other = await app.request('/call/start', jsonInit({ start }, { ...caller.basic, 'x-weave-retry-id': 'r-2' }))
    const plain = await app.request('/call/start', jsonInit({ start }, caller.basic))

    // Assess
    const [a, b, c, d] = (await Promise.all([first, second, other, plain].map((r) => r.json()))) as {
      id: string
      trace_id: string
    }[]
    expect([first.status, second.status, other.status, plain.status]).toEqual([200, 200, 200, 200])
    expect(b).toEqual(a)
    expect(new Set([a?.id, c?.id, d?.id]).size).toBe(3)
    expect(await readCallCount(project)).toBe(3)
  })
})
