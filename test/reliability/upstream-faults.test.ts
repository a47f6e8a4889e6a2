import '../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { app as usageApp } from '#functions/inference/get-usage/handler'
import { config } from '#shared/config'
import { listUsage } from '#shared/db/usage-repository'
import { estimatePromptTokens, flushUsage, hourOf } from '#shared/inference/usage-meter'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'
import { jsonInit } from '../support/auth.js'
import { type DynamoFaultProxy, startDynamoFaultProxy } from '../support/dynamo-fault-proxy.js'
import { addUpstreamModel, upstreamModelFixture } from '../support/models.js'
import { sseChunks, sseEvents } from '../support/sse.js'
import { until } from '../support/until.js'
import { promptTokensOf } from '../support/vllm-upstream.js'

const { upstream, caller, model } = await upstreamModelFixture()
const savedInference = { ...config.inference }
const savedDynamo = { ...config.dynamo }

const messages = [{ role: 'user', content: 'Hello big world' }]
const UNAVAILABLE = {
  message: 'The engine is currently overloaded, please try again later',
  type: 'ServiceUnavailableError',
  param: null,
  code: 503,
}

beforeEach(() => {
  upstream.behave({})
  Object.assign(config.inference, savedInference)
  Object.assign(config.dynamo, { ...savedDynamo, retryBaseMs: 1, retryMaxDelayMs: 5 })
})

afterAll(async () => {
  Object.assign(config.inference, savedInference)
  Object.assign(config.dynamo, savedDynamo)
})

function chat(body: Record<string, unknown>, project?: string) {
  const headers = project === undefined ? caller.bearer : { ...caller.bearer, 'OpenAI-Project': project }
  return app.request('/v1/chat/completions', jsonInit({ messages, model, ...body }, headers))
}

/** A fresh project of the caller, and a reader of its usage counters. */
function meteredProject() {
  const name = `faults-${randomUUID().slice(0, 8)}`
  const totals = async () => {
    await flushUsage()
    const counters = await listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), name)
    const sum = (f: (c: (typeof counters)[number]) => number) => counters.reduce((n, c) => n + f(c), 0)
    return {
      requests: sum((c) => c.requests),
      aborted: sum((c) => c.abortedRequests),
      prompt: sum((c) => c.promptTokens),
      completion: sum((c) => c.completionTokens),
    }
  }
  return { id: `${caller.entity}/${name}`, name, totals }
}

async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('upstream faults before the first byte', () => {
  it('answers 503 with Retry-After when the upstream refuses connections, after retrying', async () => {
    // Prepare
    const dead = await addUpstreamModel(`http://127.0.0.1:${await closedPort()}/v1`, [caller.entity])

    // Act
    const plain = await chat({ model: dead.id })
    const streamed = await chat({ model: dead.id, stream: true })

    // Assess
    for (const res of [plain, streamed]) {
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(await res.json()).toEqual({ error: UNAVAILABLE })
    }
  })

  it('retries 502 and 504 answers, then answers 503; passes a 500 through without retrying', async () => {
    // Prepare
    upstream.behave({ failStatus: 504 })
    const before = upstream.seen.length

    // Act
    const gateway = await chat({})
    const afterGateway = upstream.seen.length
    upstream.behave({ failStatus: 502, failTimes: 1 })
    const recovered = await chat({})
    upstream.behave({ failStatus: 500, failMessage: 'engine crashed' })
    const beforeCrash = upstream.seen.length
    const crashed = await chat({ stream: true })

    // Assess
    expect(gateway.status).toBe(503)
    expect(await gateway.json()).toEqual({ error: UNAVAILABLE })
    expect(afterGateway - before).toBe(config.inference.upstreamRetries + 1)
    expect(recovered.status).toBe(200)
    expect(crashed.status).toBe(500)
    expect(await crashed.json()).toEqual({
      error: { message: 'engine crashed', type: 'InternalServerError', param: null, code: 500 },
    })
    expect(upstream.seen.length - beforeCrash).toBe(1)
  })

  it("answers an upstream error that is not JSON (a proxy's page) with the generic message, its text in the log only", async () => {
    // Prepare: what a proxy in front of the model server answers, naming an internal host.
    const page = '<html><body>502 Bad Gateway: nginx at 10.0.0.5</body></html>'

    // Act
    upstream.behave({ failStatus: 500, failBody: page })
    const failed = await chat({})
    upstream.behave({ failStatus: 400, failBody: page })
    const refused = await chat({ stream: true })

    // Assess
    expect(failed.status).toBe(500)
    expect(await failed.json()).toEqual({
      error: {
        message: 'The server had an error while processing your request',
        type: 'InternalServerError',
        param: null,
        code: 500,
      },
    })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      error: { message: 'Bad Request', type: 'BadRequestError', param: null, code: 400 },
    })
  })

  it('sends heartbeats on a stream whose first byte is late, then the first-byte timeout in-stream', async () => {
    // Prepare
    config.inference.heartbeatMs = 20
    const slow = await addUpstreamModel(upstream.baseUrl, [caller.entity], {
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, firstByteTimeoutMs: 150 },
    })
    upstream.behave({ headerDelayMs: 600 })

    // Act
    const res = await chat({ model: slow.id, stream: true })
    const events = sseEvents(await res.text())

    // Assess
    expect(res.status).toBe(200)
    expect(events[0]).toBe(': keep-alive')
    expect(events.filter((e) => e === ': keep-alive').length).toBeGreaterThanOrEqual(2)
    expect(events.slice(-2)).toEqual([JSON.stringify({ error: UNAVAILABLE }), '[DONE]'])
  })

  it('times out a stream whose upstream sent its headers but no chunk, in-stream, and meters nothing', async () => {
    // Prepare: vLLM sends a stream's 200 and headers before the first token; here the token never comes in time.
    config.inference.heartbeatMs = 20
    const project = meteredProject()
    const slow = await addUpstreamModel(upstream.baseUrl, [caller.entity], {
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, firstByteTimeoutMs: 150 },
    })
    upstream.behave({ firstChunkDelayMs: 2_000 })
    const before = upstream.seen.length

    // Act
    const res = await chat({ model: slow.id, stream: true, stream_options: { include_usage: true } }, project.id)
    const events = sseEvents(await res.text())
    await upstream.seen[before]?.closed
    const totals = await project.totals()

    // Assess
    expect(res.status).toBe(200)
    expect(events.filter((e) => e === ': keep-alive').length).toBeGreaterThanOrEqual(2)
    expect(events.filter((e) => e !== ': keep-alive')).toEqual([JSON.stringify({ error: UNAVAILABLE }), '[DONE]'])
    expect(upstream.seen[before]?.closedEarly).toBe(true)
    // As a JSON completion that fails: the engine generated nothing, nothing is billed.
    expect(totals).toEqual({ requests: 0, aborted: 0, prompt: 0, completion: 0 })
  })

  it("passes an upstream 429's Retry-After through, JSON and streamed", async () => {
    // Prepare
    upstream.behave({ failStatus: 429, failMessage: 'rate limited upstream', failHeaders: { 'Retry-After': '7' } })

    // Act
    const plain = await chat({})
    const streamed = await chat({ stream: true })

    // Assess
    for (const res of [plain, streamed]) {
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toBe('7')
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe('rate limited upstream')
    }
  })

  it('answers 503 when a non-streaming upstream misses the first-byte timeout', async () => {
    // Prepare
    const slow = await addUpstreamModel(upstream.baseUrl, [caller.entity], {
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, firstByteTimeoutMs: 50 },
    })
    upstream.behave({ headerDelayMs: 400 })

    // Act
    const res = await chat({ model: slow.id })

    // Assess
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toEqual({ error: UNAVAILABLE })
  })
})

describe('upstream faults mid-stream are metered for what was delivered', () => {
  it('sends an in-stream error then [DONE] when the upstream disconnects, and meters an aborted request: prompt and delivered tokens', async () => {
    // Prepare
    const project = meteredProject()
    upstream.behave({ dropAfterChunks: 2, chunkDelayMs: 5 })
    const before = upstream.seen.length

    // Act
    const events = sseEvents(await (await chat({ stream: true }, project.id)).text())
    const totals = await project.totals()

    // Assess
    expect(events.slice(-2)).toEqual([
      JSON.stringify({
        error: {
          message: 'The server had an error while processing your request',
          type: 'InternalServerError',
          param: null,
          code: 500,
        },
      }),
      '[DONE]',
    ])
    const delivered = sseChunks(events.join('\n\n')).filter((c) => Array.isArray(c.choices))
    expect(delivered.every((c) => !('usage' in c))).toBe(true)
    expect(totals).toEqual({
      requests: 1,
      aborted: 1,
      prompt: promptTokensOf(upstream.seen[before]?.body ?? {}),
      completion: 2,
    })
  })

  it('estimates the prompt tokens of a cut stream when the upstream reports no usage on chunks', async () => {
    // Prepare
    const project = meteredProject()
    const plain = await addUpstreamModel(upstream.baseUrl, [caller.entity], {
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, continuousUsage: false },
    })
    upstream.behave({ dropAfterChunks: 2, chunkDelayMs: 5 })
    const before = upstream.seen.length

    // Act
    await (await chat({ model: plain.id, stream: true }, project.id)).text()
    const totals = await project.totals()

    // Assess
    expect(upstream.seen[before]?.body.stream_options).toEqual({ include_usage: true })
    expect(totals.prompt).toBe(estimatePromptTokens({ messages } as ChatCompletionRequest))
    expect(totals.prompt).toBeGreaterThan(0)
    expect(totals.completion).toBe(2)
  })

  it('meters the prompt and the delivered tokens when the client goes away mid-stream', async () => {
    // Prepare
    const project = meteredProject()
    upstream.behave({ chunkDelayMs: 30, reply: 'a b c d e f g h i j k l m n o p' })
    const before = upstream.seen.length
    const res = await chat({ stream: true }, project.id)
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    let received = ''
    while (
      sseChunks(received).filter((c) => (c.choices as { delta: { content?: string } }[])[0]?.delta.content).length < 3
    ) {
      const { value } = await reader.read()
      received += new TextDecoder().decode(value)
    }
    const deliveredTokens = sseChunks(received).length - 1

    // Act
    await reader.cancel()
    const totals = await until(project.totals, (t) => t.requests === 1)

    // Assess
    expect(totals.requests).toBe(1)
    expect(totals.aborted).toBe(1)
    expect(totals.prompt).toBe(promptTokensOf(upstream.seen[before]?.body ?? {}))
    expect(totals.completion).toBeGreaterThanOrEqual(deliveredTokens)
    expect(totals.completion).toBeLessThan(16)
  })

  it('ends a stream cut cleanly after every choice finished as usual, metered in full', async () => {
    // Prepare
    const project = meteredProject()
    upstream.behave({ noDone: true })
    const before = upstream.seen.length

    // Act
    const events = sseEvents(await (await chat({ stream: true, n: 1 }, project.id)).text())
    const totals = await project.totals()

    // Assess
    expect(events.some((e) => e.includes('"error"'))).toBe(false)
    expect(events.at(-1)).toBe('[DONE]')
    expect(sseChunks(events.join('\n\n')).at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }] })
    expect(totals).toEqual({
      requests: 1,
      aborted: 0,
      prompt: promptTokensOf(upstream.seen[before]?.body ?? {}),
      completion: 3,
    })
  })

  it('reports the metered cut stream through GET /v1/usage', async () => {
    // Prepare
    const project = meteredProject()
    upstream.behave({ dropAfterChunks: 1, chunkDelayMs: 5 })
    await (await chat({ stream: true }, project.id)).text()
    await flushUsage()

    // Act
    const res = await usageApp.request(`/v1/usage?project=${project.id}`, { headers: caller.bearer })

    // Assess
    expect(res.status).toBe(200)
    const report = (await res.json()) as { data: Record<string, unknown>[] }
    expect(report.data).toEqual([
      expect.objectContaining({ project: project.id, model, requests: 1, prompt_tokens: 5, completion_tokens: 1 }),
    ])
  })
})

describe('usage flushes under DynamoDB faults', () => {
  let proxy: DynamoFaultProxy
  let restore: () => void

  beforeAll(async () => {
    proxy = await startDynamoFaultProxy()
    restore = proxy.use()
  })

  afterAll(async () => {
    restore()
    await proxy.close()
  })

  it('counts a completion once when the counter write is applied but its answer is lost', async () => {
    // Prepare
    const project = meteredProject()
    await (await chat({}, project.id)).json()
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 1 })

    // Act
    const totals = await project.totals()
    proxy.clear()

    // Assess
    expect(totals).toEqual({ requests: 1, aborted: 0, prompt: 5, completion: 3 })
  })

  it('counts a retried flush once when a newer flush of the same counter went out meanwhile', async () => {
    // Prepare: flush 1 is applied but every answer is lost, so the meter keeps it to retry; a second completion
    // of the same counter follows.
    const project = meteredProject()
    await (await chat({}, project.id)).json()
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 1 })
    proxy.inject({ fault: 'unavailable', operations: ['UpdateItem'] })
    await flushUsage()
    proxy.clear()
    await (await chat({}, project.id)).json()

    // Act: the retry's first attempt is dropped before it reaches the table (the SDK tries again).
    proxy.inject({ fault: 'drop', operations: ['UpdateItem'], times: 1 })
    await flushUsage()
    proxy.clear()
    await flushUsage()
    const totals = await project.totals()

    // Assess
    expect(totals).toEqual({ requests: 2, aborted: 0, prompt: 10, completion: 6 })
  })

  it('keeps a failed flush and writes it exactly once when DynamoDB is back', async () => {
    // Prepare
    const project = meteredProject()
    await (await chat({}, project.id)).json()
    proxy.inject({ fault: 'unavailable', operations: ['UpdateItem'] })
    await flushUsage()
    proxy.clear()

    // Act
    const totals = await project.totals()
    await flushUsage()
    const again = await project.totals()

    // Assess
    expect(totals).toEqual({ requests: 1, aborted: 0, prompt: 5, completion: 3 })
    expect(again).toEqual(totals)
  })
})
