import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import OpenAI from 'openai'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { config } from '#shared/config'
import { listUsage } from '#shared/db/usage-repository'
import { clearCatalogCache } from '#shared/inference/catalog'
import { estimatePromptTokens, flushUsage, hourOf } from '#shared/inference/usage-meter'
import { logger } from '#shared/logger'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'
import { jsonInit, newCaller } from '../../support/auth.js'
import { addUpstreamModel, putRawModel, upstreamModelFixture } from '../../support/models.js'
import { sseChunks, sseEvents } from '../../support/sse.js'
import { until } from '../../support/until.js'
import { startVllmUpstream } from '../../support/vllm-upstream.js'

const { upstream, caller, model } = await upstreamModelFixture((baseUrl) => ({
  backend: { kind: 'openai-compatible', baseUrl, upstreamModel: 'served-name' },
}))

beforeEach(() => {
  upstream.behave({})
  config.inference.heartbeatMs = 2_000
})

const messages = [{ role: 'user', content: 'Hello big world' }]

function chat(body: Record<string, unknown>, headers: Record<string, string> = {}, path = '/v1/chat/completions') {
  return app.request(path, jsonInit({ messages, model, ...body }, { ...caller.bearer, ...headers }))
}

type ErrorBody = { error: { message: string; type: string; param: string | null; code: number } }

describe('POST /v1/chat/completions (non-streaming)', () => {
  it('answers the contract body with the gateway id, served model name and usage', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({}, { 'x-request-id': 'req-123' })

    // Assess
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toEqual({
      id: 'chatcmpl-req-123',
      object: 'chat.completion',
      created: expect.any(Number),
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hello big world',
            refusal: null,
            annotations: null,
            audio: null,
            function_call: null,
            reasoning: null,
          },
          logprobs: null,
          finish_reason: 'stop',
          stop_reason: null,
          token_ids: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: { prompt_tokens: 5, total_tokens: 8, completion_tokens: 3, prompt_tokens_details: null },
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
    })
    expect(Number(res.headers.get('loom-overhead-ms'))).toBeGreaterThanOrEqual(0)
    const seen = upstream.seen[before]
    expect(seen?.body.model).toBe('served-name')
    expect(seen?.headers['x-request-id']).toBe('req-123')
    expect(seen?.body).not.toHaveProperty('stream_options')
  })

  it('fills the contract keys a hosted upstream leaves out', async () => {
    // Prepare
    upstream.behave({ minimal: true })

    // Act
    const body = (await (await chat({})).json()) as Record<string, unknown> & { choices: Record<string, unknown>[] }
    const chunks = sseChunks(await (await chat({ stream: true })).text())

    // Assess
    expect(body).toMatchObject({
      service_tier: null,
      system_fingerprint: null,
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
    })
    expect(body.choices[0]).toMatchObject({ logprobs: null, stop_reason: null, token_ids: null })
    expect(body.usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: null })
    expect(body.choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Hello big world',
      refusal: null,
      annotations: null,
      audio: null,
      function_call: null,
      reasoning: null,
    })
    expect(chunks[0]).toHaveProperty('prompt_token_ids', null)
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: { content: ' big' }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: { content: ' world' }, logprobs: null, finish_reason: 'stop', stop_reason: null }],
    ])
  })

  it('serves the path with a trailing slash and uses the body request_id without a header', async () => {
    const res = await chat({ request_id: 'body-id' }, {}, '/v1/chat/completions/')
    expect(res.status).toBe(200)
    expect(((await res.json()) as { id: string }).id).toBe('chatcmpl-body-id')
  })

  it('answers 404 for an unknown model and for a model of another entity', async () => {
    // Prepare
    const other = await newCaller()
    const foreign = await addUpstreamModel(upstream.baseUrl, [other.entity])

    // Act
    const unknown = await chat({ model: 'nope/none' })
    const forbidden = await chat({ model: foreign.id })

    // Assess
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({
      error: { message: 'The model `nope/none` does not exist.', type: 'NotFoundError', param: 'model', code: 404 },
    })
    expect(forbidden.status).toBe(404)
    expect(((await forbidden.json()) as ErrorBody).error.message).toBe(`The model \`${foreign.id}\` does not exist.`)
  })

  it('uses the only available model when none is named, and asks for one when several are available', async () => {
    // Prepare
    const solo = await newCaller()
    const only = await addUpstreamModel(upstream.baseUrl, [solo.entity])
    await addUpstreamModel(upstream.baseUrl, [caller.entity])

    // Act
    const one = await app.request('/v1/chat/completions', jsonInit({ messages }, solo.bearer))
    const several = await app.request('/v1/chat/completions', jsonInit({ messages, model: '' }, caller.bearer))

    // Assess
    expect(one.status).toBe(200)
    expect(((await one.json()) as { model: string }).model).toBe(only.id)
    expect(several.status).toBe(400)
    const error = ((await several.json()) as ErrorBody).error
    expect(error.param).toBe('model')
    expect(error.type).toBe('BadRequestError')
    expect(error.message).toContain(model)
  })

  it('answers 401 without a key and 403 for a project of a foreign entity', async () => {
    const anonymous = await app.request('/v1/chat/completions', jsonInit({ messages, model }, {}))
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toEqual({
      error: { message: 'Authentication failed', type: 'AuthenticationError', param: null, code: 401 },
    })
    const foreign = await chat({}, { 'OpenAI-Project': 'someone-else/proj' })
    expect(foreign.status).toBe(403)
    expect(((await foreign.json()) as ErrorBody).error.type).toBe('PermissionDeniedError')
  })

  it('passes an upstream client error through in the contract shape', async () => {
    // Prepare
    upstream.behave({
      failStatus: 400,
      failMessage: "This model's maximum context length is 16 tokens. However, your request has 20 input tokens.",
    })

    // Act
    const res = await chat({})

    // Assess
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      error: {
        message: "This model's maximum context length is 16 tokens. However, your request has 20 input tokens.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    })
  })

  it('hides an upstream credential failure behind a 500', async () => {
    upstream.behave({ failStatus: 401, failMessage: 'bad upstream key' })
    const res = await chat({})
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({
      error: {
        message: 'The server had an error while processing your request',
        type: 'InternalServerError',
        param: null,
        code: 500,
      },
    })
  })

  it('retries an upstream 503 before answering', async () => {
    // Prepare
    upstream.behave({ failStatus: 503, failTimes: 1 })
    const before = upstream.seen.length

    // Act
    const res = await chat({})

    // Assess
    expect(res.status).toBe(200)
    expect(upstream.seen.length - before).toBe(2)
  })

  it('answers 503 when the upstream stays unavailable or cannot be reached', async () => {
    upstream.behave({ failStatus: 503 })
    const busy = await chat({})
    expect(busy.status).toBe(503)
    expect(((await busy.json()) as ErrorBody).error).toEqual({
      message: 'The engine is currently overloaded, please try again later',
      type: 'ServiceUnavailableError',
      param: null,
      code: 503,
    })
    expect(busy.headers.get('retry-after')).toBe('1')
    expect(busy.headers.get('x-should-retry')).toBeNull()
    const dead = await addUpstreamModel('http://127.0.0.1:1/v1', [caller.entity])
    const refused = await chat({ model: dead.id })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.headers.get('x-should-retry')).toBeNull()
  })

  it("keeps an upstream 503's longer Retry-After, streamed or not, and Loom's 1 s where the upstream asks for less", async () => {
    // Prepare
    const at = (seconds: number) => new Date(Date.now() + seconds * 1_000).toUTCString()

    // Act
    upstream.behave({ failStatus: 503, failHeaders: { 'Retry-After': '7' } })
    const plain = await chat({})
    const streamed = await chat({ stream: true })
    upstream.behave({ failStatus: 503, failHeaders: { 'Retry-After': '0' } })
    const shorter = await chat({})
    upstream.behave({ failStatus: 503, failHeaders: { 'Retry-After': at(30) } })
    const dated = await chat({})
    upstream.behave({ failStatus: 502, failHeaders: { 'Retry-After': '7' } })
    const badGateway = await chat({})

    // Assess
    expect([plain.status, streamed.status, shorter.status, dated.status, badGateway.status]).toEqual([
      503, 503, 503, 503, 503,
    ])
    expect(plain.headers.get('retry-after')).toBe('7')
    expect(streamed.headers.get('retry-after')).toBe('7')
    expect(shorter.headers.get('retry-after')).toBe('1')
    expect(Number(dated.headers.get('retry-after'))).toBeGreaterThanOrEqual(29)
    expect(Number(dated.headers.get('retry-after'))).toBeLessThanOrEqual(30)
    // Only a 503 says the engine is busy for that long; a proxy's 502 keeps Loom's own pause.
    expect(badGateway.headers.get('retry-after')).toBe('1')
  })

  it('answers 503 naming the model whose upstream URL is unusable or holds credentials, streamed or not, for entries past the checks', async () => {
    // Prepare
    const ftp = `qa/ftp-${randomUUID().slice(0, 8)}`
    const garbled = `qa/garbled-${randomUUID().slice(0, 8)}`
    const upstreamOf = (id: string, baseUrl: string) =>
      putRawModel({ id, backend: { kind: 'openai-compatible', baseUrl }, entities: [caller.entity] })
    const userinfo = `qa/userinfo-${randomUUID().slice(0, 8)}`
    await upstreamOf(ftp, 'ftp://x/v1')
    await upstreamOf(garbled, 'not a url')
    await upstreamOf(userinfo, 'http://user:secret-pass@127.0.0.1:1/v1')

    // Act
    const plain = await chat({ model: ftp })
    const streamed = await chat({ model: ftp, stream: true })
    const unparsable = await chat({ model: garbled })
    const credentials = await chat({ model: userinfo })

    // Assess
    const misconfigured = {
      message: `The upstream of model \`${ftp}\` is misconfigured: its base URL must be an http or https URL`,
      type: 'ServiceUnavailableError',
      param: null,
      code: 503,
    }
    expect(plain.status).toBe(503)
    expect(((await plain.json()) as ErrorBody).error).toEqual(misconfigured)
    expect(streamed.status).toBe(503)
    expect(((await streamed.json()) as ErrorBody).error).toEqual(misconfigured)
    expect(unparsable.status).toBe(503)
    expect(((await unparsable.json()) as ErrorBody).error.message).toContain(`model \`${garbled}\` is misconfigured`)
    expect(credentials.status).toBe(503)
    // A permanent misconfiguration: no Retry-After, and the OpenAI SDKs told not to retry it.
    for (const res of [plain, streamed, unparsable, credentials]) {
      expect(res.headers.get('x-should-retry')).toBe('false')
      expect(res.headers.get('retry-after')).toBeNull()
    }
    expect(((await credentials.json()) as ErrorBody).error.message).toBe(
      `The upstream of model \`${userinfo}\` is misconfigured: its base URL must not contain a user name or password`,
    )
  })

  it('is not retried by the openai SDK when a model is misconfigured: one request, where a bare 503 costs three', async () => {
    // Prepare
    const id = `qa/sdk-ftp-${randomUUID().slice(0, 8)}`
    await putRawModel({ id, backend: { kind: 'openai-compatible', baseUrl: 'ftp://x/v1' }, entities: [caller.entity] })
    let requests = 0
    const client = new OpenAI({
      apiKey: caller.key,
      baseURL: 'http://loom.test/v1',
      maxRetries: 2,
      fetch: async (url, init) => {
        requests++
        return await app.request(String(url), init)
      },
    })

    // Act
    const failure = await client.chat.completions
      .create({ model: id, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error)

    // Assess
    expect(failure).toBeInstanceOf(OpenAI.InternalServerError)
    expect(failure).toMatchObject({ status: 503 })
    expect(requests).toBe(1)
  })

  it('answers 503 naming the model and the field for reference engine settings stored past the checks', async () => {
    // Prepare
    const id = `qa/bad-settings-${randomUUID().slice(0, 8)}`
    await putRawModel({
      id,
      backend: { kind: 'reference', settings: { maxConcurrency: -1 } },
      entities: [caller.entity],
    })

    // Act
    const plain = await chat({ model: id })
    const streamed = await chat({ model: id, stream: true })

    // Assess
    const misconfigured = {
      message: expect.stringMatching(
        new RegExp(
          `^The model \`${id}\` is misconfigured: its engine settings are invalid \\(settings\\.maxConcurrency: `,
        ),
      ),
      type: 'ServiceUnavailableError',
      param: null,
      code: 503,
    }
    expect(plain.status).toBe(503)
    expect(((await plain.json()) as ErrorBody).error).toEqual(misconfigured)
    expect(streamed.status).toBe(503)
    expect(((await streamed.json()) as ErrorBody).error).toEqual(misconfigured)
    expect([plain.headers.get('x-should-retry'), streamed.headers.get('x-should-retry')]).toEqual(['false', 'false'])
  })

  it('answers 503 saying why when LOOM_MODELS_FILE holds an unusable base URL, never a bare 500', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-catalog-'))
    const file = join(dir, 'models.json')
    const entry = { id: 'qa/up', backend: { kind: 'openai-compatible', baseUrl: 'ftp://x' }, entities: ['*'] }
    await writeFile(file, JSON.stringify([entry]))
    config.inference.modelsFile = file
    clearCatalogCache()

    // Act
    const res = await chat({ model: 'qa/up' })
    config.inference.modelsFile = undefined
    clearCatalogCache()
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(res.status).toBe(503)
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(((await res.json()) as ErrorBody).error).toEqual({
      message:
        'The model catalog is misconfigured: LOOM_MODELS_FILE: invalid model at 0.backend.baseUrl: must be an http or https URL, such as http://10.0.0.5:8000/v1',
      type: 'ServiceUnavailableError',
      param: null,
      code: 503,
    })
  })

  it('gives up after the first-byte timeout', async () => {
    // Prepare
    const slow = await addUpstreamModel(upstream.baseUrl, [caller.entity], {
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, firstByteTimeoutMs: 50 },
    })
    upstream.behave({ headerDelayMs: 400 })

    // Act
    const res = await chat({ model: slow.id })

    // Assess
    expect(res.status).toBe(503)
  })

  it('answers 503 for a plaintext credential stored past the checks, never sending or printing it', async () => {
    // Prepare
    const id = `qa/plain-${randomUUID().slice(0, 8)}`
    const secret = 'sk-live-plaintext-served'
    await putRawModel({
      id,
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, apiKeyRef: secret },
      entities: [caller.entity],
    })
    const logged = (['error', 'warn', 'info', 'debug'] as const).map((level) => vi.spyOn(logger, level))
    const sentBefore = upstream.seen.length

    // Act
    const plain = await chat({ model: id })
    const streamed = await chat({ model: id, stream: true })
    const bodies = [await plain.text(), await streamed.text()]
    const printed = inspect(
      logged.flatMap((spy) => spy.mock.calls),
      { depth: 12 },
    )
    for (const spy of logged) spy.mockRestore()

    // Assess
    const misconfigured = {
      message: `The upstream credential of model \`${id}\` is misconfigured: its reference must be env:NAME or secret:<id>`,
      type: 'ServiceUnavailableError',
      param: null,
      code: 503,
    }
    expect(plain.status).toBe(503)
    expect(streamed.status).toBe(503)
    expect(bodies.map((text) => (JSON.parse(text) as ErrorBody).error)).toEqual([misconfigured, misconfigured])
    expect([plain.headers.get('x-should-retry'), streamed.headers.get('x-should-retry')]).toEqual(['false', 'false'])
    expect(bodies.join('')).not.toContain(secret)
    expect(upstream.seen.length).toBe(sentBefore)
    expect(printed).toContain(id)
    expect(printed).not.toContain(secret)
  })

  it('sends the upstream credential from the environment, never from the table; unset, a 503 naming the model', async () => {
    // Prepare
    const guarded = await startVllmUpstream({ apiKey: 'upstream-secret' })
    const entry = await addUpstreamModel(guarded.baseUrl, [caller.entity], {
      backend: { kind: 'openai-compatible', baseUrl: guarded.baseUrl, apiKeyRef: 'env:LOOM_TEST_UPSTREAM_KEY' },
    })
    vi.stubEnv('LOOM_TEST_UPSTREAM_KEY', 'upstream-secret')

    // Act
    const ok = await chat({ model: entry.id })
    vi.unstubAllEnvs()
    const sentBefore = guarded.seen.length
    const unset = await chat({ model: entry.id })
    const unsetStreamed = await chat({ model: entry.id, stream: true })
    const sentUnset = guarded.seen.length - sentBefore
    await guarded.close()

    // Assess
    expect(ok.status).toBe(200)
    // Like an unusable base URL: the caller may not be the operator, so the variable's name goes to the log only.
    const unconfigured = {
      message: `The upstream credential of model \`${entry.id}\` is not configured`,
      type: 'ServiceUnavailableError',
      param: null,
      code: 503,
    }
    expect(unset.status).toBe(503)
    expect(((await unset.json()) as ErrorBody).error).toEqual(unconfigured)
    expect(unsetStreamed.status).toBe(503)
    expect(((await unsetStreamed.json()) as ErrorBody).error).toEqual(unconfigured)
    expect([unset.headers.get('x-should-retry'), unsetStreamed.headers.get('x-should-retry')]).toEqual([
      'false',
      'false',
    ])
    expect(sentUnset).toBe(0)
  })
})

describe('POST /v1/chat/completions (streaming)', () => {
  it('streams the contract chunk sequence without usage by default', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({ stream: true }, { 'x-request-id': 's-1' })
    const text = await res.text()

    // Assess
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const events = sseEvents(text)
    expect(events.at(-1)).toBe('[DONE]')
    const chunks = sseChunks(text)
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: { content: ' big' }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: { content: ' world' }, logprobs: null, finish_reason: 'stop', stop_reason: null }],
    ])
    expect(chunks[0]).toHaveProperty('prompt_token_ids', null)
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: 'chatcmpl-s-1', object: 'chat.completion.chunk', model })
      expect(chunk).not.toHaveProperty('usage')
    }
    expect(new Set(chunks.map((c) => c.created)).size).toBe(1)
    expect(upstream.seen[before]?.body.stream_options).toEqual({ include_usage: true, continuous_usage_stats: true })
  })

  it('adds the usage chunk with include_usage, and usage on every chunk with continuous_usage_stats', async () => {
    // Act
    const plain = sseChunks(await (await chat({ stream: true, stream_options: { include_usage: true } })).text())
    const continuous = sseChunks(
      await (
        await chat({ stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } })
      ).text(),
    )

    // Assess
    expect(plain.at(-1)).toEqual({
      id: expect.any(String),
      object: 'chat.completion.chunk',
      created: expect.any(Number),
      model,
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    })
    expect(plain.slice(0, -1).every((c) => !('usage' in c))).toBe(true)
    expect(continuous.map((c) => (c.usage as { completion_tokens: number }).completion_tokens)).toEqual([0, 1, 2, 3, 3])
  })

  it('answers an error before the first chunk as ordinary JSON with its status', async () => {
    upstream.behave({ failStatus: 400, failMessage: 'bad prompt' })
    const res = await chat({ stream: true })
    expect(res.status).toBe(400)
    expect(((await res.json()) as ErrorBody).error.message).toBe('bad prompt')
  })

  it('turns an upstream error mid-stream into an in-stream error event followed by [DONE]', async () => {
    upstream.behave({ errorAfterChunks: 1 })
    const events = sseEvents(await (await chat({ stream: true })).text())
    expect(events.slice(-2)).toEqual([
      JSON.stringify({
        error: { message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 },
      }),
      '[DONE]',
    ])
    expect(events.length).toBe(4)
  })

  it('turns a dropped upstream connection into an in-stream error followed by [DONE]', async () => {
    upstream.behave({ dropAfterChunks: 2, chunkDelayMs: 10 })
    const events = sseEvents(await (await chat({ stream: true })).text())
    expect(events.at(-1)).toBe('[DONE]')
    expect(JSON.parse(events.at(-2) ?? '{}')).toEqual({
      error: {
        message: 'The server had an error while processing your request',
        type: 'InternalServerError',
        param: null,
        code: 500,
      },
    })
  })

  it('sends SSE comment heartbeats while waiting for the first token', async () => {
    // Prepare
    config.inference.heartbeatMs = 40
    upstream.behave({ firstChunkDelayMs: 250 })

    // Act
    const events = sseEvents(await (await chat({ stream: true })).text())

    // Assess
    expect(events[0]).toBe(': keep-alive')
    const firstData = events.findIndex((e) => !e.startsWith(':'))
    expect(firstData).toBeGreaterThanOrEqual(2)
    expect(events.slice(firstData).every((e) => !e.startsWith(':'))).toBe(true)
    expect(events.at(-1)).toBe('[DONE]')
  })

  it('stops the upstream and meters the completion as aborted when the client goes away', async () => {
    // Prepare
    const project = `p-${Date.now()}`
    upstream.behave({ chunkDelayMs: 30, reply: 'a b c d e f g h i j k l m n o p' })
    const before = upstream.seen.length
    const res = await chat({ stream: true }, { 'Compat-Project': `${caller.entity}/${project}` })
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    await reader.read()

    // Act
    await reader.cancel()
    const counters = await until(
      async () => {
        await flushUsage()
        return listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), project)
      },
      (found) => found.some((c) => c.requests > 0) && upstream.seen[before]?.closedEarly === true,
    )

    // Assess
    expect(upstream.seen[before]?.closedEarly).toBe(true)
    expect(counters.reduce((n, c) => n + c.abortedRequests, 0)).toBe(1)
    expect(counters.reduce((n, c) => n + c.requests, 0)).toBe(1)
  })

  it('closes the upstream connection when the client leaves while a JSON answer is still coming (QA)', async () => {
    // Prepare: the upstream sends its headers and half its body, then stalls; nothing but the client's leaving ends it.
    upstream.behave({ stallBody: true })
    const aborter = new AbortController()
    const before = upstream.seen.length
    const pending = app.request('/v1/chat/completions', {
      ...jsonInit({ messages, model }, caller.bearer),
      signal: aborter.signal,
    })
    const seen = await until(
      () => upstream.seen[before],
      (request) => request !== undefined,
    )
    // The half body is on its way once the upstream has the request; the gateway has read the headers by then.
    await new Promise((resolve) => setTimeout(resolve, 100))

    // Act
    aborter.abort()
    await Promise.resolve(pending).catch(() => undefined)

    // Assess: the gateway closed the connection (vLLM stops generating), it was not left open on the stalled body.
    await seen?.closed
    expect(seen?.closedEarly).toBe(true)
  })

  it('meters a client that leaves before the JSON answer as a stream left before its first chunk: the prompt', async () => {
    // Prepare: a stream aborted before its first chunk was metered with the estimated prompt, a JSON request aborted
    // before its answer with nothing (upstream QA); the upstream has the prompt either way.
    const project = `p-${Date.now()}`
    upstream.behave({ headerDelayMs: 2_000 })
    const aborter = new AbortController()
    const init = jsonInit({ messages, model }, { ...caller.bearer, 'Compat-Project': `${caller.entity}/${project}` })

    // Act
    const before = upstream.seen.length
    const pending = app.request('/v1/chat/completions', { ...init, signal: aborter.signal })
    // Left once the upstream has the request and before it answers.
    await until(
      () => upstream.seen.length,
      (n) => n > before,
    )
    aborter.abort()
    await Promise.resolve(pending).catch(() => undefined)
    const counters = await until(
      async () => {
        await flushUsage()
        return listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), project)
      },
      (found) => found.some((c) => c.requests > 0),
    )

    // Assess
    const prompt = estimatePromptTokens({ messages, model } as ChatCompletionRequest)
    expect(prompt).toBeGreaterThan(0)
    expect(counters.reduce((n, c) => n + c.abortedRequests, 0)).toBe(1)
    expect(counters.reduce((n, c) => n + c.promptTokens, 0)).toBe(prompt)
    expect(counters.reduce((n, c) => n + c.completionTokens, 0)).toBe(0)
  })
})

/** The project's usage counters of the last two hours, and a sum over them. */
async function projectUsage(project: string) {
  const counters = await listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), project)
  const sum = (f: (c: (typeof counters)[number]) => number) => counters.reduce((n, c) => n + f(c), 0)
  return { counters, sum }
}

describe('usage metering', () => {
  it('adds every completion, streamed or not, to the project and model counters', async () => {
    // Prepare
    const project = `meter-${Date.now()}`
    const headers = { 'OpenAI-Project': `${caller.entity}/${project}` }

    // Act
    await (await chat({}, headers)).json()
    await (await chat({ stream: true }, headers)).text()
    await flushUsage()

    // Assess
    const { counters, sum } = await projectUsage(project)
    expect(sum((c) => c.requests)).toBe(2)
    expect(sum((c) => c.promptTokens)).toBe(10)
    expect(sum((c) => c.completionTokens)).toBe(6)
    expect(counters.every((c) => c.model === model)).toBe(true)
  })

  it('meters a project whose name holds a space, as the tracing family accepts it', async () => {
    // Prepare: W&B's project names may hold spaces (none of / \\ # ? % : or control characters)
    const project = `my meter ${Date.now()}`

    // Act
    const res = await chat({}, { 'OpenAI-Project': ` ${caller.entity}/${project} ` })
    await res.json()
    await flushUsage()

    // Assess
    expect(res.status).toBe(200)
    const { sum } = await projectUsage(project)
    expect(sum((c) => c.requests)).toBe(1)
  })

  it('answers and meters an estimate when the upstream reports no usage, streamed or not', async () => {
    // Prepare
    const project = `nousage-${Date.now()}`
    const headers = { 'OpenAI-Project': `${caller.entity}/${project}` }
    // 4 characters a token: the prompt by estimatePromptTokens, 'Hello big world' (15 characters) as 4 tokens.
    const prompt = estimatePromptTokens({ messages } as ChatCompletionRequest)

    // Act
    upstream.behave({ noUsage: true })
    const vllm = await chat({}, headers)
    const stream = await chat({ stream: true, stream_options: { include_usage: true } }, headers)
    upstream.behave({ noUsage: true, minimal: true })
    const hosted = await chat({}, headers)
    const chunks = sseChunks(await stream.text())
    await flushUsage()

    // Assess
    const usage = { prompt_tokens: prompt, total_tokens: prompt + 4, completion_tokens: 4, prompt_tokens_details: null }
    for (const res of [vllm, hosted]) {
      expect(res.status).toBe(200)
      const body = (await res.json()) as { usage: unknown; choices: { message: { content: string } }[] }
      expect(body.usage).toEqual(usage)
      expect(body.choices[0]?.message.content).toBe('Hello big world')
    }
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: prompt, completion_tokens: 3, total_tokens: prompt + 3 },
    })
    const { sum } = await projectUsage(project)
    expect(sum((c) => c.requests)).toBe(3)
    expect(sum((c) => c.promptTokens)).toBe(3 * prompt)
    expect(sum((c) => c.completionTokens)).toBe(4 + 3 + 4)
  })
})
