import '../support/lambda-shim.js'
import type { AddressInfo } from 'node:net'
import { type ServerType, serve } from '@hono/node-server'
import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { app as chatApp } from '#functions/inference/create-chat-completion/handler'
import { app as modelsApp } from '#functions/inference/list-models/handler'
import { app as queryObjs } from '#functions/tracing/query-objs/handler'
import { app as previewModels } from '#functions/training/list-preview-models/handler'
import { config } from '#shared/config'
import { rawDb } from '#shared/db/client'
import { claimSlot } from '#shared/db/rate-limit-repository'
import { flushUsage } from '#shared/inference/usage-meter'
import { keyScope } from '#shared/limits/limiter'
import type { CatalogModel } from '#shared/schemas/model'
import type { RateLimits } from '#shared/schemas/rate-limit'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { addUpstreamModel } from '../support/models.js'
import { until } from '../support/until.js'
import { startVllmUpstream, type VllmUpstream } from '../support/vllm-upstream.js'

// This file loads fresh copies of modules; the worker's next file starts from a clean registry (test files share
// their worker: vitest.config.ts, `isolate: false`).
afterAll(() => {
  vi.resetModules()
})

let upstream: VllmUpstream

beforeAll(async () => {
  upstream = await startVllmUpstream()
})

beforeEach(() => {
  upstream.behave({})
})

afterAll(async () => {
  await upstream.close()
})

const messages = [{ role: 'user', content: 'Hello big world' }]
// A slow stream: 8 tokens, 60 ms apart, so requests overlap while the test holds them open.
const SLOW = { chunkDelayMs: 60, reply: 'a b c d e f g h' }

// Rate windows are fixed UTC minutes: a test that counts within one window starts at the beginning of one. The clock
// (Date only; timers stay real) jumps to a second past the next minute and runs on from there, so no test waits for a
// window edge and none straddles one, whenever it runs.
function atWindowStart(): void {
  const next = Math.ceil(Date.now() / 60_000) * 60_000
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true })
  vi.setSystemTime(next + 1_000)
}

afterEach(() => {
  vi.useRealTimers()
})

type ChatApp = typeof chatApp

type Setup = { caller: TestCaller; model: string }

async function setup(keyLimits?: RateLimits, model: Partial<CatalogModel> = {}): Promise<Setup> {
  const caller = await newCaller(undefined, keyLimits)
  const added = await addUpstreamModel(upstream.baseUrl, [caller.entity], model)
  return { caller, model: added.id }
}

function chat(
  s: Setup,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  app: ChatApp = chatApp,
) {
  return app.request(
    '/v1/chat/completions',
    jsonInit({ messages, model: s.model, ...body }, { ...s.caller.bearer, ...headers }),
  )
}

function expectRetryAfter(res: Response, max: number): void {
  const value = res.headers.get('retry-after')
  expect(value).toMatch(/^\d+$/)
  expect(Number(value)).toBeGreaterThanOrEqual(1)
  expect(Number(value)).toBeLessThanOrEqual(max)
}

describe('per-key requests per minute', () => {
  it('answers the inference request over the key rpm with 429 RateLimitError and Retry-After', async () => {
    // Prepare
    atWindowStart()
    const caller = await newCaller(undefined, { rpm: 2 })

    // Act
    const statuses = []
    for (let i = 0; i < 2; i++)
      statuses.push((await modelsApp.request('/v1/models', { headers: caller.bearer })).status)
    const refused = await modelsApp.request('/v1/models', { headers: caller.bearer })

    // Assess
    expect(statuses).toEqual([200, 200])
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({
      error: { message: 'Rate limit reached for requests', type: 'RateLimitError', param: null, code: 429 },
    })
    expectRetryAfter(refused, 60)
  })

  it('answers the tracing request over the key rpm with 429 {"reason"} and Retry-After', async () => {
    // Prepare
    atWindowStart()
    const caller = await newCaller(undefined, { rpm: 2 })
    const query = () => queryObjs.request('/objs/query', jsonInit({ project_id: `${caller.entity}/p` }, caller.basic))

    // Act
    const first = await query()
    const second = await query()
    const refused = await query()

    // Assess
    expect([first.status, second.status]).toEqual([200, 200])
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ reason: 'Rate limit reached for requests' })
    expectRetryAfter(refused, 60)
  })

  it('answers the training request over the key rpm with 429 {"detail"} and Retry-After', async () => {
    // Prepare
    atWindowStart()
    const caller = await newCaller(undefined, { rpm: 1 })

    // Act
    const first = await previewModels.request('/v1/preview/models', { headers: caller.bearer })
    const refused = await previewModels.request('/v1/preview/models', { headers: caller.bearer })

    // Assess
    expect(first.status).toBe(200)
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ detail: 'Rate limit reached for requests' })
    expectRetryAfter(refused, 60)
  })

  it('counts each key on its own', async () => {
    // Prepare
    atWindowStart()
    const limited = await newCaller(undefined, { rpm: 1 })
    const other = await newCaller(undefined, { rpm: 1 })
    await modelsApp.request('/v1/models', { headers: limited.bearer })

    // Act
    const refused = await modelsApp.request('/v1/models', { headers: limited.bearer })
    const admitted = await modelsApp.request('/v1/models', { headers: other.bearer })

    // Assess
    expect(refused.status).toBe(429)
    expect(admitted.status).toBe(200)
  })
})

describe('concurrent requests', () => {
  it('lets exactly N of N+1 simultaneous slow streams through and frees the slots when they end', async () => {
    // Prepare
    upstream.behave(SLOW)
    const s = await setup({ concurrency: 2 })

    // Act
    const responses = await Promise.all([0, 1, 2].map(() => chat(s, { stream: true })))
    const refused = responses.filter((r) => r.status === 429)
    const refusedBodies = await Promise.all(refused.map((r) => r.json()))
    const refusedHeaders = refused.map((r) => r.headers.get('retry-after'))
    const streamed = await Promise.all(responses.filter((r) => r.status === 200).map((r) => r.text()))
    const after = await chat(s, { stream: true })
    const afterBody = await after.text()

    // Assess
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 429])
    expect(refusedBodies).toEqual([
      { error: { message: 'Concurrency limit reached for requests', type: 'RateLimitError', param: null, code: 429 } },
    ])
    expect(refusedHeaders).toEqual(['1'])
    expect(streamed.every((text) => text.endsWith('data: [DONE]\n\n'))).toBe(true)
    expect(after.status).toBe(200)
    expect(afterBody).toContain('data: [DONE]')
  })

  it('frees the slot of a stream whose client went away', async () => {
    // Prepare
    upstream.behave(SLOW)
    const s = await setup({ concurrency: 1 })
    const held = await chat(s, { stream: true })
    const reader = (held.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    const whileHeld = await chat(s)

    // Act
    await reader.cancel()
    upstream.behave({})
    const afterAbort = await chat(s)

    // Assess
    expect(held.status).toBe(200)
    expect(whileHeld.status).toBe(429)
    expect(afterAbort.status).toBe(200)
    expect(await afterAbort.json()).toMatchObject({ object: 'chat.completion' })
  })

  it('applies the key concurrency to every route, and frees the slot after a JSON answer or an error', async () => {
    // Prepare
    const caller = await newCaller(undefined, { concurrency: 1 })

    // Act
    const sequential = []
    for (let i = 0; i < 3; i++)
      sequential.push((await modelsApp.request('/v1/models', { headers: caller.bearer })).status)
    const failed = await queryObjs.request('/objs/query', jsonInit({ project_id: 'not-a-project' }, caller.basic))
    const afterError = await previewModels.request('/v1/preview/models', { headers: caller.bearer })

    // Assess
    expect(sequential).toEqual([200, 200, 200])
    expect(failed.status).toBeGreaterThanOrEqual(400)
    expect(failed.status).toBeLessThan(429)
    expect(afterError.status).toBe(200)
  })

  it('frees a slot left by a crashed instance once its lease ran out', async () => {
    // Prepare
    const s = await setup({ concurrency: 1 })
    const expired = Date.now() - config.concurrencyLeaseMs - 1_000
    await claimSlot(keyScope(s.caller.keyId), 1, 'crashed-instance', expired, config.concurrencyLeaseMs)
    await claimSlot(keyScope(s.caller.keyId), 1, 'stale-instance', expired, config.concurrencyLeaseMs)

    // Act
    const res = await chat(s)

    // Assess
    expect(res.status).toBe(200)
  })

  it('applies a model concurrency limit per project using the model', async () => {
    // Prepare
    upstream.behave(SLOW)
    const s = await setup(undefined, { concurrency: 1 })
    const project = (name: string) => ({ 'compat-project': `${s.caller.entity}/${name}` })
    const held = await chat(s, { stream: true }, project('a'))

    // Act
    const sameProject = await chat(s, { stream: true }, project('a'))
    const otherProject = await chat(s, { stream: true }, project('b'))
    await Promise.all([held.text(), otherProject.text()])
    const afterwards = await chat(s, {}, project('a'))

    // Assess
    expect(held.status).toBe(200)
    expect(sameProject.status).toBe(429)
    expect(((await sameProject.json()) as { error: { message: string } }).error.message).toBe(
      'Concurrency limit reached for requests',
    )
    expect(otherProject.status).toBe(200)
    expect(afterwards.status).toBe(200)
  })
})

describe('tokens per minute', () => {
  it('refuses the next completion once a completion consumed the key tpm', async () => {
    // Prepare
    atWindowStart()
    const s = await setup({ tpm: 8 })

    // Act
    const first = await chat(s)
    const usage = ((await first.json()) as { usage: { total_tokens: number } }).usage
    const refused = await chat(s)

    // Assess
    expect(first.status).toBe(200)
    expect(usage.total_tokens).toBe(8)
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({
      error: { message: 'Rate limit reached for tokens', type: 'RateLimitError', param: null, code: 429 },
    })
    expectRetryAfter(refused, 60)
  })

  it('charges a streamed completion to the model tpm of its project only', async () => {
    // Prepare
    atWindowStart()
    const s = await setup(undefined, { tpm: 8 })
    const project = (name: string) => ({ 'openai-project': `${s.caller.entity}/${name}` })
    const streamed = await chat(s, { stream: true }, project('a'))
    await streamed.text()

    // Act
    const sameProject = await chat(s, {}, project('a'))
    const otherProject = await chat(s, {}, project('b'))

    // Assess
    expect(sameProject.status).toBe(429)
    expect(((await sameProject.json()) as { error: { message: string } }).error.message).toBe(
      'Rate limit reached for tokens',
    )
    expect(otherProject.status).toBe(200)
  })

  it('charges the tokens of an aborted stream', async () => {
    // Prepare
    atWindowStart()
    upstream.behave(SLOW)
    const s = await setup(undefined, {
      tpm: 5,
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, continuousUsage: true },
    })
    const res = await chat(s, { stream: true })
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    await reader.read()

    // Act
    await reader.cancel()
    const refused = await chat(s)

    // Assess
    expect(res.status).toBe(200)
    expect(refused.status).toBe(429)
  })

  it('does not count tokens against a key without tpm', async () => {
    // Prepare
    atWindowStart()
    const s = await setup({ rpm: 100 })

    // Act
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await chat(s)).status)

    // Assess
    expect(statuses).toEqual([200, 200, 200])
  })
})

describe('limits across Lambda instances', () => {
  // A second copy of every module: its own auth and catalog caches and its own DynamoDB client, same table.
  async function secondInstance(): Promise<ChatApp> {
    vi.resetModules()
    const fresh = await import('#shared/config')
    fresh.config.tableName = config.tableName
    fresh.config.dynamoEndpoint = config.dynamoEndpoint
    return (await import('#functions/inference/create-chat-completion/handler')).app
  }

  it('holds the key concurrency and rpm across two independently created apps', async () => {
    // Prepare
    atWindowStart()
    upstream.behave(SLOW)
    const s = await setup({ concurrency: 1, rpm: 3 })
    const other = await secondInstance()
    const held = await chat(s, { stream: true })

    // Act
    const concurrent = await chat(s, { stream: true }, {}, other)
    await held.text()
    upstream.behave({})
    const afterRelease = await chat(s, {}, {}, other)
    const overRate = await chat(s)

    // Assess
    expect(held.status).toBe(200)
    expect(concurrent.status).toBe(429)
    expect(((await concurrent.json()) as { error: { message: string } }).error.message).toBe(
      'Concurrency limit reached for requests',
    )
    expect(afterRelease.status).toBe(200)
    expect(overRate.status).toBe(429)
    expect(((await overRate.json()) as { error: { message: string } }).error.message).toBe(
      'Rate limit reached for requests',
    )
  })
})

describe('cost when no limit applies', () => {
  async function countCalls(run: () => Promise<void>): Promise<number> {
    let calls = 0
    const stack = rawDb().middlewareStack
    stack.add(
      (next) => async (args) => {
        calls++
        return next(args)
      },
      { step: 'initialize', name: 'countRateLimitTestCalls' },
    )
    try {
      await run()
    } finally {
      stack.remove('countRateLimitTestCalls')
    }
    return calls
  }

  it('makes no DynamoDB call on the request path for an unlimited key and model, and one per limit otherwise', async () => {
    // Prepare
    const free = await setup()
    const limited = await setup({ rpm: 100 })
    const untraced = { 'loom-trace': 'off' }
    for (const s of [free, limited]) {
      await (await chat(s, {}, untraced)).json()
      await (await modelsApp.request('/v1/models', { headers: s.caller.bearer })).json()
    }
    await flushUsage()

    // Act
    const freeCalls = await countCalls(async () => {
      await (await chat(free, {}, untraced)).json()
      await (await chat(free, { stream: true }, untraced)).text()
      await (await modelsApp.request('/v1/models', { headers: free.caller.bearer })).json()
    })
    const limitedCalls = await countCalls(async () => {
      await (await modelsApp.request('/v1/models', { headers: limited.caller.bearer })).json()
    })
    await flushUsage()

    // Assess
    expect(freeCalls).toBe(0)
    expect(limitedCalls).toBe(1)
  })
})

describe('official openai SDK', () => {
  let server: ServerType
  let baseURL: string

  beforeAll(async () => {
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: chatApp.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
    })
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  })

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  it('surfaces a refused request as RateLimitError with Retry-After', async () => {
    // Prepare
    atWindowStart()
    const s = await setup({ rpm: 1 })
    const client = new OpenAI({ apiKey: s.caller.key, baseURL, maxRetries: 0 })
    await client.chat.completions.create({ model: s.model, messages: [{ role: 'user', content: 'hi' }] })

    // Act
    const error = await client.chat.completions
      .create({ model: s.model, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      )

    // Assess
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    const rateError = error as InstanceType<typeof OpenAI.RateLimitError>
    expect(rateError.status).toBe(429)
    expect(rateError.message).toContain('Rate limit reached for requests')
    expect(rateError.headers.get('retry-after')).toMatch(/^\d+$/)
  })

  it('surfaces the concurrency refusal of a second stream as RateLimitError', async () => {
    // Prepare
    upstream.behave(SLOW)
    const s = await setup({ concurrency: 1 })
    const client = new OpenAI({ apiKey: s.caller.key, baseURL, maxRetries: 0 })
    const held = await client.chat.completions.create({ model: s.model, messages, stream: true } as never)

    // Act
    const error = await client.chat.completions
      .create({ model: s.model, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    let text = ''
    for await (const chunk of held as unknown as AsyncIterable<{ choices: { delta: { content?: string } }[] }>) {
      text += chunk.choices[0]?.delta.content ?? ''
    }

    // Assess
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect((error as Error).message).toContain('Concurrency limit reached for requests')
    expect(text).toBe('a b c d e f g h')
  })

  it("holds a stream's slot on the Node server until its body ended, and frees it when its client goes away", async () => {
    // Prepare
    upstream.behave(SLOW)
    const s = await setup({ concurrency: 1 })
    const stream = () =>
      fetch(`${baseURL}/chat/completions`, jsonInit({ messages, model: s.model, stream: true }, s.caller.bearer))

    // Act
    const first = await stream()
    const whileStreaming = await chat(s)
    const firstBody = await first.text()
    const afterEnd = await chat(s)
    const second = await stream()
    const reader = (second.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    await reader.cancel()
    upstream.behave({})
    const afterLeaving = await until(
      () => chat(s),
      (res) => res.status === 200,
    )

    // Assess
    expect(first.status).toBe(200)
    expect(whileStreaming.status).toBe(429)
    expect(firstBody.endsWith('data: [DONE]\n\n')).toBe(true)
    expect(afterEnd.status).toBe(200)
    expect(second.status).toBe(200)
    expect(afterLeaving.status).toBe(200)
  })
})
