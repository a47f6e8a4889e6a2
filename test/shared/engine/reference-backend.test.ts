import { describe, expect, it } from 'vitest'
import { REASONING_BUDGET } from '#shared/engine/params'
import { referenceBackend } from '#shared/engine/reference-backend'
import { Cancellation } from '#shared/inference/cancellation'
import { sseStream } from '#shared/inference/sse-stream'
import type { ChatCompletionChunk, ChatCompletionRequest } from '#shared/schemas/chat-completion'
import { sseChunks, sseEvents } from '../../support/sse.js'
import { ask, complete, model, streamAll, text } from './support.js'

const JSON_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 20 }, rivers: { type: 'integer', minimum: 0, maximum: 9 } },
  required: ['city', 'rivers'],
  additionalProperties: false,
}

describe('reference backend', () => {
  it('answers with every field of the contract response', async () => {
    // Act
    const response = await complete(ask('Say hello.', { temperature: 0 }))

    // Assess
    expect(response).toMatchObject({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'loom/reference-1',
      service_tier: null,
      system_fingerprint: null,
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
    })
    expect(response.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: 'Hello! How can I help you today?',
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
    })
    expect(response.usage.total_tokens).toBe(response.usage.prompt_tokens + response.usage.completion_tokens)
  })

  it('streams role, deltas, one finish chunk and a usage chunk that add up to the buffered answer', async () => {
    // Prepare
    const request = ask('Tell me a short story.', { seed: 11, max_completion_tokens: 40, n: 2 })

    // Act
    const chunks = await streamAll(request)
    const buffered = await complete(request)

    // Assess
    for (const index of [0, 1]) {
      const mine = chunks.filter((c) => c.choices[0]?.index === index)
      expect(mine[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' })
      expect(mine[0]?.prompt_token_ids).toBeNull()
      expect(mine.filter((c) => c.choices[0]?.finish_reason !== null)).toHaveLength(1)
      expect(mine.at(-1)?.choices[0]?.finish_reason).toBe(buffered.choices[index]?.finish_reason)
      expect(mine.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(text(buffered, index))
    }
    const usage = chunks.at(-1) as ChatCompletionChunk
    expect(usage.choices).toEqual([])
    expect(usage.usage).toMatchObject({
      prompt_tokens: buffered.usage.prompt_tokens,
      completion_tokens: buffered.usage.completion_tokens,
    })
  })

  it.each([[['q']], [['zz']], [['\n\n']], [['🎉🙂']], [['zzz']], [['🌊🎉🎉', 'zz']]])(
    'streams whole characters, holding back max(len(stop)) - 1 characters, that add up to the buffered answer (stop %j)',
    async (stop) => {
      // Prepare
      const cheer = (seed: number) => ({
        messages: [
          { role: 'user' as const, content: 'Cheer me up with emoji.' },
          { role: 'assistant' as const, content: '🎉🙂🎉 🌊🙂 🎉🎉 🙂🌊🎉 🙂🙂 🌊🎉🙂 🎉' },
        ],
        add_generation_prompt: false,
        continue_final_message: true,
        max_completion_tokens: 60,
        stop,
        seed,
      })
      // vLLM holds back max(len(stop)) - 1 characters, Python's len counting code points (`[...s]` splits the same way).
      const held = Math.max(...stop.map((s) => [...s].length)) - 1
      // With the u flag a surrogate pair is one character, so only a lone half matches.
      const loneSurrogate = /[\uD800-\uDFFF]/u

      for (const seed of [1, 2, 3, 4]) {
        // Act
        const buffered = await complete(cheer(seed))
        const chunks = await streamAll({ ...cheer(seed), return_token_ids: true })

        // Assess
        const deltas = chunks.map((c) => c.choices[0]?.delta.content ?? '')
        expect(text(buffered)).toMatch(/\p{Extended_Pictographic}/u)
        expect(deltas.filter((d) => loneSurrogate.test(d))).toEqual([])
        expect(deltas.join('')).toBe(text(buffered))
        const bytes = new TextDecoder()
        let generated = ''
        let released = ''
        for (const choice of chunks.map((c) => c.choices[0])) {
          if (!choice || choice.finish_reason !== null) continue
          // Special tokens are skipped in content; the answer's bytes decode as a stream, incomplete characters held.
          for (const id of choice.token_ids ?? []) {
            if (id < 256) generated += bytes.decode(Uint8Array.of(id), { stream: true })
          }
          released += choice.delta.content ?? ''
          const characters = [...generated]
          expect(released).toBe(characters.slice(0, Math.max(0, characters.length - held)).join(''))
        }
      }
    },
  )

  it('returns reasoning in message.reasoning and delta.reasoning, within the effort budget, unless include_reasoning is false', async () => {
    // Prepare
    const request = ask('Why is the sky blue?', {
      reasoning_effort: 'low' as const,
      seed: 2,
      max_completion_tokens: 120,
    })

    // Act
    const shown = await complete(request)
    const hidden = await complete({ ...request, include_reasoning: false, return_token_ids: true })
    const chunks = await streamAll(request)

    // Assess
    const reasoning = shown.choices[0]?.message.reasoning ?? ''
    expect(reasoning.length).toBeGreaterThan(0)
    expect(shown.usage.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0)
    expect(shown.usage.completion_tokens_details?.reasoning_tokens).toBeLessThanOrEqual(REASONING_BUDGET.low)
    expect(text(shown)).not.toContain('</think>')
    expect(hidden.choices[0]?.message.reasoning).toBeNull()
    expect(hidden.choices[0]?.token_ids).toBeNull()
    expect(text(hidden)).toBe(text(shown))
    expect(chunks.map((c) => c.choices[0]?.delta.reasoning ?? '').join('')).toBe(reasoning)
  })

  it.each([
    ['reasoning', { reasoning_effort: 'low' as const }],
    ['no reasoning', {}],
  ])(
    'hides logprobs and token ids but not prompt ids when include_reasoning is false (%s), as vLLM does with a reasoning parser',
    async (_, extra) => {
      // Prepare
      const request = ask('Why is the sky blue?', {
        ...extra,
        include_reasoning: false,
        logprobs: true,
        top_logprobs: 2,
        return_token_ids: true,
        seed: 2,
        max_completion_tokens: 60,
      })

      // Act
      const buffered = await complete(request)
      const chunks = await streamAll({ ...request, stream: true })

      // Assess: vLLM's `suppress_metadata` (buffered) and `hide_stream_metadata` (every chunk); a reasoning token's
      // chunk, left empty, is not sent.
      expect(buffered.choices[0]?.logprobs).toBeNull()
      expect(buffered.choices[0]?.token_ids).toBeNull()
      expect(buffered.prompt_token_ids?.length).toBe(buffered.usage.prompt_tokens)
      expect(chunks[0]?.prompt_token_ids?.length).toBe(buffered.usage.prompt_tokens)
      const choices = chunks.flatMap((c) => c.choices)
      expect(choices.every((c) => c.logprobs === null && c.token_ids === undefined)).toBe(true)
      const body = choices.slice(1)
      expect(body.every((c) => (c.delta.content ?? '') !== '' || c.finish_reason !== null)).toBe(true)
      expect(body.map((c) => c.delta.content ?? '').join('')).toBe(text(buffered))
    },
  )

  it('applies a JSON schema to the answer after the reasoning section', async () => {
    // Act
    const response = await complete(
      ask('Describe a city.', {
        reasoning_effort: 'medium',
        response_format: { type: 'json_schema', json_schema: { name: 'c', schema: JSON_SCHEMA } },
        seed: 5,
      }),
    )

    // Assess
    expect(response.choices[0]?.message.reasoning?.length).toBeGreaterThan(0)
    expect(Object.keys(JSON.parse(text(response)))).toEqual(['city', 'rivers'])
  })

  it('reports cached prompt tokens for a repeated prefix, never across cache salts', async () => {
    // Prepare
    const long = `Remember this: ${'the weaver and the river. '.repeat(8)}`
    const m = model({ id: `loom/cache-${Math.random()}` })

    // Act
    const first = await complete(ask(long, { cache_salt: 'a', max_completion_tokens: 2 }), m)
    const again = await complete(ask(long, { cache_salt: 'a', max_completion_tokens: 2 }), m)
    const otherSalt = await complete(ask(long, { cache_salt: 'b', max_completion_tokens: 2 }), m)

    // Assess
    expect(first.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 })
    const cached = again.usage.prompt_tokens_details?.cached_tokens ?? 0
    expect(cached).toBeGreaterThan(0)
    expect(cached % 16).toBe(0)
    expect(cached).toBeLessThan(again.usage.prompt_tokens)
    expect(otherSalt.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 })
  })

  it('queues beyond the concurrency limit and serves lower priority values first', async () => {
    // Prepare
    const m = model({
      id: `loom/queue-${Math.random()}`,
      scheduling: 'priority',
      backend: { kind: 'reference', settings: { maxConcurrency: 1 } },
    })
    const order: string[] = []
    const run = (name: string, priority: number, tokens: number) =>
      complete(ask('Tell me a story.', { priority, ignore_eos: true, max_completion_tokens: tokens, seed: 1 }), m).then(
        () => order.push(name),
      )

    // Act
    const blocker = run('blocker', 0, 200)
    await new Promise((resolve) => setImmediate(resolve))
    await Promise.all([blocker, run('late', 5, 5), run('urgent', -5, 5), run('normal', 0, 5)])

    // Assess
    expect(order).toEqual(['blocker', 'urgent', 'normal', 'late'])
  })

  it('serves first come first served on an fcfs model', async () => {
    // Prepare
    const m = model({
      id: `loom/fcfs-${Math.random()}`,
      backend: { kind: 'reference', settings: { maxConcurrency: 1 } },
    })
    const order: string[] = []
    const run = (name: string, tokens: number) =>
      complete(ask('Tell me a story.', { ignore_eos: true, max_completion_tokens: tokens, seed: 1 }), m).then(() =>
        order.push(name),
      )

    // Act
    await Promise.all([run('first', 100), run('second', 5), run('third', 5)])

    // Assess
    expect(order).toEqual(['first', 'second', 'third'])
  })

  it("streams token by token through the gateway's SSE writer", async () => {
    // Prepare
    const request = ask('Tell me a short story.', {
      stream: true,
      seed: 8,
      max_completion_tokens: 25,
      stream_options: { include_usage: true },
    })
    const iterator = referenceBackend
      .stream({ request, model: model(), requestId: 'sse', created: 1, signal: new Cancellation() })
      [Symbol.asyncIterator]()
    let usage: unknown

    // Act
    const body = sseStream(iterator, {
      request,
      first: iterator.next(),
      waiting: false,
      collect: true,
      abort: () => undefined,
      onEnd: async (outcome) => {
        usage = outcome.usage
      },
    })
    const raw = await new Response(body).text()

    // Assess
    const chunks = sseChunks(raw) as {
      choices: { delta: { content?: string } }[]
      usage?: { completion_tokens: number }
    }[]
    const buffered = await complete({ ...request, stream: false, stream_options: null })
    expect(sseEvents(raw).at(-1)).toBe('[DONE]')
    expect(chunks.length).toBeGreaterThan(20)
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(text(buffered))
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(25)
    expect(usage).toMatchObject({ completion_tokens: 25 })
  })

  it('refuses a non-zero priority on an fcfs model', async () => {
    // Act
    const act = complete(ask('Hi', { priority: 3 }))

    // Assess
    await expect(act).rejects.toMatchObject({
      statusCode: 400,
      message: 'Got priority 3 but Priority scheduling is not enabled.',
    })
  })

  it('puts cumulative per-choice usage with reasoning tokens on every chunk, prompt details only on the usage chunk', async () => {
    // Act
    const chunks = await streamAll(
      ask('Why is the sky blue?', { seed: 1, max_completion_tokens: 60, reasoning_effort: 'low' }),
    )

    // Assess
    const perChunk = chunks.slice(0, -1).map((c) => c.usage)
    const counts = perChunk.map((u) => u?.completion_tokens ?? -1)
    const reasoning = perChunk.map((u) => u?.completion_tokens_details?.reasoning_tokens ?? -1)
    expect(counts[0]).toBe(0)
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    expect(reasoning[0]).toBe(0)
    expect(reasoning).toEqual([...reasoning].sort((a, b) => a - b))
    for (const usage of perChunk) {
      expect(Object.keys(usage ?? {}).sort()).toEqual([
        'completion_tokens',
        'completion_tokens_details',
        'prompt_tokens',
        'total_tokens',
      ])
    }
    const final = chunks.at(-1)?.usage
    expect(final?.prompt_tokens_details).toEqual({ cached_tokens: expect.any(Number) })
    // The last content chunk's figures are the final usage's (one choice).
    expect(perChunk.at(-1)?.completion_tokens_details).toEqual(final?.completion_tokens_details)
    expect(final?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0)
    expect(final?.completion_tokens_details?.reasoning_tokens).toBeLessThan(final?.completion_tokens ?? 0)
  })

  // A final assistant message continued and echoed.
  const continued = (extra: Record<string, unknown> = {}) => ({
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Well,' },
    ],
    add_generation_prompt: false,
    continue_final_message: true,
    echo: true,
    seed: 1,
    max_completion_tokens: 5,
    ...extra,
  })

  it('streams the echoed final message after the role chunk', async () => {
    // Act
    const chunks = await streamAll(continued())

    // Assess
    expect(chunks[1]?.choices[0]?.delta).toEqual({ content: 'Well,' })
  })

  it('streams every choice role chunk before the echoes, as vLLM does with n > 1', async () => {
    // Act
    const chunks = await streamAll(continued({ n: 2 }))

    // Assess
    const opening = chunks.slice(0, 4).map((c) => [c.choices[0]?.index, c.choices[0]?.delta])
    expect(opening).toEqual([
      [0, { role: 'assistant', content: '' }],
      [1, { role: 'assistant', content: '' }],
      [0, { content: 'Well,' }],
      [1, { content: 'Well,' }],
    ])
  })

  it('echoes a content list as vLLM does: its text parts joined with newlines, buffered and streamed, every choice', async () => {
    // Prepare: every text-like part type; a text part without its text is left out, as vLLM's parser leaves it.
    const request = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Say' },
            { type: 'input_text', text: 'hello' },
            { type: 'text', text: null },
            { type: 'refusal', refusal: 'no' },
            { type: 'thinking', thinking: 'hm' },
            'please.',
          ],
        },
      ],
      add_generation_prompt: false,
      echo: true,
      n: 2,
      seed: 3,
      max_completion_tokens: 3,
    } as ChatCompletionRequest

    // Act
    const buffered = await complete(request)
    const chunks = await streamAll({ ...request, stream: true })

    // Assess
    const echo = 'Say\nhello\nno\nhm\nplease.'
    for (const choice of buffered.choices) expect(choice.message.content?.startsWith(echo)).toBe(true)
    expect(chunks.slice(2, 4).map((c) => c.choices[0]?.delta)).toEqual([{ content: echo }, { content: echo }])
  })

  it('stops generating when the signal aborts', async () => {
    // Prepare
    const cancellation = new Cancellation()
    const chunks: ChatCompletionChunk[] = []

    // Act
    for await (const chunk of referenceBackend.stream({
      request: ask('Tell me a story.', { ignore_eos: true, max_completion_tokens: 1000 }),
      model: model(),
      requestId: 'abort',
      created: 1,
      signal: cancellation,
    })) {
      chunks.push(chunk)
      if (chunks.length === 5) cancellation.abort()
    }

    // Assess
    expect(chunks.length).toBeLessThan(10)
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true)
  })

  it('answers a disconnected non-streaming request with an error', async () => {
    // Prepare
    const cancellation = new Cancellation()
    const pending = complete(
      ask('Tell me a story.', { ignore_eos: true, max_completion_tokens: 2000 }),
      model(),
      cancellation,
    )

    // Act
    setImmediate(() => cancellation.abort())

    // Assess
    await expect(pending).rejects.toThrow('Client disconnected')
  })
})
