import type { AddressInfo } from 'node:net'
import { type ServerType, serve } from '@hono/node-server'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { flushUsage } from '#shared/inference/usage-meter'
import { createLocalApp } from '../../scripts/local/app.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { addUpstreamModel } from '../support/models.js'
import { until } from '../support/until.js'
import { startVllmUpstream, type VllmUpstream } from '../support/vllm-upstream.js'

let upstream: VllmUpstream
let server: ServerType
let baseURL: string
let caller: TestCaller
let model: string
let client: OpenAI

beforeAll(async () => {
  upstream = await startVllmUpstream()
  caller = await newCaller()
  model = (await addUpstreamModel(upstream.baseUrl, [caller.entity], { ownedBy: 'acme' })).id
  const app = await createLocalApp()
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
  })
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  client = new OpenAI({ apiKey: caller.key, baseURL, maxRetries: 0 })
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await upstream.close()
})

const messages = [{ role: 'user' as const, content: 'Hello from the SDK' }]

describe('official openai SDK against the local stack', () => {
  it('lists the models the key may use', async () => {
    // Act
    const page = await client.models.list()

    // Assess
    const card = page.data.find((m) => m.id === model)
    expect(card).toMatchObject({ id: model, object: 'model', created: 0, owned_by: 'acme' })
  })

  it('creates a completion', async () => {
    // Act
    const { data: completion, response } = await client.chat.completions.create({ model, messages }).withResponse()

    // Assess
    expect(completion.id).toBe(`chatcmpl-${response.headers.get('x-request-id')}`)
    expect(Number(response.headers.get('loom-overhead-ms'))).toBeGreaterThanOrEqual(0)
    expect(completion.model).toBe(model)
    expect(completion.choices[0]?.message.content).toBe('Hello from the SDK')
    expect(completion.choices[0]?.finish_reason).toBe('stop')
    expect(completion.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 })
  })

  it('streams with include_usage', async () => {
    // Act
    const { data: stream, response } = await client.chat.completions
      .create({ model, messages, stream: true, stream_options: { include_usage: true } })
      .withResponse()
    let text = ''
    let usage: OpenAI.CompletionUsage | null | undefined
    const finishes: (string | null)[] = []
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason)
      if (chunk.usage) usage = chunk.usage
    }

    // Assess
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(Number(response.headers.get('loom-overhead-ms'))).toBeGreaterThanOrEqual(0)
    expect(text).toBe('Hello from the SDK')
    expect(finishes).toEqual(['stop'])
    expect(usage).toEqual({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 })
  })

  it('surfaces errors as the SDK typed errors with the contract messages', async () => {
    // Act
    const notFound = await client.chat.completions.create({ model: 'no/such-model', messages }).catch((e: unknown) => e)
    const invalid = await client.chat.completions
      .create({ model, messages, top_logprobs: 3 } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e)
    const badKey = await new OpenAI({ apiKey: 'loom_wrong', baseURL, maxRetries: 0 }).models
      .list()
      .catch((e: unknown) => e)
    const foreign = await new OpenAI({ apiKey: caller.key, baseURL, maxRetries: 0, project: 'other-team/p' }).models
      .list()
      .catch((e: unknown) => e)

    // Assess
    expect(notFound).toBeInstanceOf(OpenAI.NotFoundError)
    expect((notFound as InstanceType<typeof OpenAI.NotFoundError>).message).toContain(
      'The model `no/such-model` does not exist.',
    )
    expect((notFound as InstanceType<typeof OpenAI.NotFoundError>).param).toBe('model')
    expect(invalid).toBeInstanceOf(OpenAI.BadRequestError)
    expect((invalid as Error).message).toContain('when using `top_logprobs`, `logprobs` must be set to true.')
    expect(badKey).toBeInstanceOf(OpenAI.AuthenticationError)
    expect((badKey as Error).message).toContain('Authentication failed')
    expect(foreign).toBeInstanceOf(OpenAI.PermissionDeniedError)
  })

  it('stops the upstream when the client aborts a stream, and meters it', async () => {
    // Prepare
    upstream.behave({ chunkDelayMs: 20, reply: 'one two three four five six seven eight nine ten eleven twelve' })
    const before = upstream.seen.length
    const controller = new AbortController()

    // Act
    const stream = await client.chat.completions.create(
      { model, messages, stream: true },
      { signal: controller.signal },
    )
    let received = 0
    try {
      for await (const _chunk of stream) {
        received++
        if (received === 3) controller.abort()
      }
    } catch {
      // The SDK rejects the iteration with an abort error, as it should.
    }
    await until(
      () => upstream.seen[before]?.closedEarly,
      (closed) => closed === true,
    )
    await flushUsage()
    upstream.behave({})

    // Assess: a chunk the SDK had already read may still be handed over after the abort, never the whole answer
    // (a role chunk, 12 words and the finish chunk).
    expect(received).toBeGreaterThanOrEqual(3)
    expect(received).toBeLessThan(8)
    expect(upstream.seen[before]?.closedEarly).toBe(true)
  })
})
