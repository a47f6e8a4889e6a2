import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { app as endApp } from '#functions/tracing/end-call/handler'
import { app as readApp } from '#functions/tracing/read-call/handler'
import { app as startApp } from '#functions/tracing/start-call/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { recordCall } from '#shared/tracing/record-call'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { endPart, newProject, startPart, writeCalls } from '../../support/calls.js'

// This file loads fresh copies of modules; the worker's next file starts from a clean registry (test files share
// their worker: vitest.config.ts, `isolate: false`).
afterAll(() => {
  vi.resetModules()
})

const SECRET = 'sk-live-0123456789abcdef'

async function readCall(caller: TestCaller, project: string, id: string): Promise<Record<string, unknown>> {
  const res = await readApp.request('/call/read', jsonInit({ project_id: project, id }, caller.basic))
  expect(res.status).toBe(200)
  return ((await res.json()) as { call: Record<string, unknown> }).call
}

async function query(caller: TestCaller, body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const res = await queryApp.request('/calls/stream_query', jsonInit(body, caller.basic))
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

beforeEach(() => {
  vi.unstubAllEnvs()
})

describe('secrets in calls are not stored', () => {
  it('replaces values under credential keys, nested at any depth and in any case, by REDACTED (call/start, call/end)', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, {
      inputs: {
        self: { client: { API_KEY: SECRET, base_url: 'https://api.openai.com/v1' } },
        messages: [{ role: 'user', content: 'hi', auth_headers: { 'X-Org': 'o' } }],
        options: { headers: { Authorization: `Bearer ${SECRET}` }, password: SECRET },
        // Only whole key names match, as in the reference: these stay.
        my_api_key_hint: 'last four 0cdef',
        logprobs: [{ token: 'Hello', logprob: -0.1 }],
      },
      attributes: { weave: { client: { Api_Key: SECRET } }, deployment: 'blue' },
    })

    // Act
    const started = await startApp.request('/call/start', jsonInit({ start }, caller.basic))
    const ended = await endApp.request(
      '/call/end',
      jsonInit(
        { end: endPart(project, start.id as string, { output: { access_token: SECRET, text: 'ok' } }) },
        caller.basic,
      ),
    )
    const call = await readCall(caller, project, start.id as string)

    // Assess
    expect(started.status).toBe(200)
    expect(ended.status).toBe(200)
    expect(JSON.stringify(call)).not.toContain(SECRET)
    expect(call.inputs).toEqual({
      self: { client: { API_KEY: 'REDACTED', base_url: 'https://api.openai.com/v1' } },
      messages: [{ role: 'user', content: 'hi', auth_headers: 'REDACTED' }],
      options: { headers: { Authorization: 'REDACTED' }, password: 'REDACTED' },
      my_api_key_hint: 'last four 0cdef',
      logprobs: [{ token: 'Hello', logprob: -0.1 }],
    })
    expect(call.attributes).toMatchObject({ weave: { client: { Api_Key: 'REDACTED' } }, deployment: 'blue' })
    expect(call.output).toEqual({ access_token: 'REDACTED', text: 'ok' })
  })

  it('leaves calls/stream_query nothing to match on the secret (call/upsert_batch)', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { inputs: { api_key: SECRET, prompt: 'p' } })
    await writeCalls(caller, [{ start, end: endPart(project, start.id as string) }])
    const eq = (path: string, value: string) => ({
      $expr: { $eq: [{ $getField: path }, { $literal: value }] },
    })
    const contains = (path: string, substr: string) => ({
      $expr: { $contains: { input: { $getField: path }, substr: { $literal: substr } } },
    })

    // Act
    const bySecret = await query(caller, { project_id: project, query: eq('inputs.api_key', SECRET) })
    const bySubstring = await query(caller, { project_id: project, query: contains('inputs.api_key', 'sk-live') })
    const control = await query(caller, { project_id: project, query: contains('inputs.prompt', 'p') })
    const byRedacted = await query(caller, { project_id: project, query: eq('inputs.api_key', 'REDACTED') })

    // Assess
    expect(bySecret).toEqual([])
    expect(bySubstring).toEqual([])
    expect(byRedacted.map((c) => c.id)).toEqual([start.id])
    expect(control.map((c) => c.id)).toEqual([start.id])
  })

  it('covers the calls Loom records itself (gateway completions, training logs)', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const id = crypto.randomUUID()

    // Act
    await recordCall({
      id,
      projectId: project,
      opName: 'loom.chat.completions',
      inputs: { model: 'm', extra_headers: { authorization: SECRET } },
      output: null,
      startedAt: new Date(),
      endedAt: new Date(),
      userId: caller.userId,
    })

    // Assess
    expect((await readCall(caller, project, id)).inputs).toEqual({
      model: 'm',
      extra_headers: { authorization: 'REDACTED' },
    })
  })

  it('redacts the extra keys LOOM_REDACT_KEYS names, case-insensitively', async () => {
    // Prepare
    vi.stubEnv('LOOM_REDACT_KEYS', ' Session_Cookie , x-tenant-secret,')
    vi.resetModules()

    // Act
    const { shouldRedact, redactingReplacer } = await import('#shared/tracing/redact')

    // Assess
    expect(shouldRedact('session_cookie')).toBe(true)
    expect(shouldRedact('X-Tenant-Secret')).toBe(true)
    expect(shouldRedact('api_key')).toBe(true)
    expect(shouldRedact('session')).toBe(false)
    expect(shouldRedact('')).toBe(false)
    expect(JSON.stringify({ a: [{ SESSION_COOKIE: 'c' }], b: 1 }, redactingReplacer)).toBe(
      '{"a":[{"SESSION_COOKIE":"REDACTED"}],"b":1}',
    )
  })
})
