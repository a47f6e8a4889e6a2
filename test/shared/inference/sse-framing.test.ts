import { describe, expect, it } from 'vitest'
import { BadRequestError } from '#shared/errors/http-error'
import { rewriteChunkJson } from '#shared/inference/chunk-json'
import { DONE, errorEvent, frameChunk, HEARTBEAT, type UsageFraming, usageEvent } from '#shared/inference/sse-framing'
import type { ChatCompletionChunk } from '#shared/schemas/chat-completion'

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const parse = (event: string | undefined) => {
  expect(event).toMatch(/^data: .*\n\n$/s)
  return JSON.parse((event as string).slice('data: '.length)) as Record<string, unknown>
}
const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, created: 1, model: 'm' }
const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: null }
const contentChunk = (extra: Record<string, unknown> = {}) =>
  ({
    ...base,
    choices: [{ index: 0, delta: { content: 'hi' }, logprobs: null, finish_reason: null }],
    ...extra,
  }) as unknown as ChatCompletionChunk

describe('SSE framing of chat-completion chunks', () => {
  it("sends the upstream's usage chunk only with include_usage, its nulls dropped", () => {
    // Prepare
    const usageChunk = () => ({ ...base, choices: [], usage: { ...usage } }) as unknown as ChatCompletionChunk

    // Act
    const without = frameChunk(usageChunk(), { includeUsage: false, continuous: false })
    const withUsage = parse(frameChunk(usageChunk(), { includeUsage: true, continuous: false }))

    // Assess
    expect(without).toBeUndefined()
    expect(withUsage).toEqual({
      ...base,
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    })
  })

  it('keeps usage on content chunks only with continuous stats', () => {
    // Act
    const dropped = parse(frameChunk(contentChunk({ usage: { ...usage } }), { includeUsage: true, continuous: false }))
    const kept = parse(frameChunk(contentChunk({ usage: { ...usage } }), { includeUsage: true, continuous: true }))

    // Assess
    expect(dropped).not.toHaveProperty('usage')
    expect(kept.usage).toEqual(usage)
  })

  it('gives a role chunk prompt_token_ids null unless the backend set it', () => {
    // Prepare
    const role = (extra: Record<string, unknown> = {}) =>
      ({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
        ...extra,
      }) as unknown as ChatCompletionChunk

    // Act
    const plain = parse(frameChunk(role(), { includeUsage: false, continuous: false }))
    const ids = parse(frameChunk(role({ prompt_token_ids: [1, 2] }), { includeUsage: false, continuous: false }))
    const content = parse(frameChunk(contentChunk(), { includeUsage: false, continuous: false }))

    // Assess
    expect(plain.prompt_token_ids).toBeNull()
    expect(ids.prompt_token_ids).toEqual([1, 2])
    expect(content).not.toHaveProperty('prompt_token_ids')
  })

  it('writes the gateway’s own usage chunk under the last chunk’s id, created and model', () => {
    // Act
    const event = parse(usageEvent({ ...base, created: 42 }, { prompt_tokens: 7, completion_tokens: 4 }))

    // Assess
    expect(event).toEqual({
      ...base,
      created: 42,
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 },
    })
  })

  it('frames an error as the family’s error body, a heartbeat as a comment and the end as [DONE]', () => {
    // Act
    const error = parse(errorEvent(new BadRequestError('bad things')))

    // Assess
    expect(error).toMatchObject({ error: { message: 'bad things', code: 400 } })
    expect(decode(HEARTBEAT)).toBe(': keep-alive\n\n')
    expect(decode(DONE)).toBe('data: [DONE]\n\n')
  })

  it('frames a chunk from its own JSON text with the same edits as when it serialises the chunk', () => {
    // Prepare: upstream texts as vLLM writes them (continuous usage on every chunk), with the gateway's id and model.
    const up = '"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m"'
    const u = (completion: number) =>
      `"usage":{"prompt_tokens":3,"total_tokens":${3 + completion},"completion_tokens":${completion}}`
    const texts = [
      `{${up},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],${u(0)}}`,
      `{${up},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":[1,2],${u(0)}}`,
      `{${up},"choices":[{"index":0,"delta":{"content":"h\u00e9 👋"},"logprobs":null,"finish_reason":null}],${u(1)}}`,
      `{${up},"choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}],${u(1)}}`,
      `{${up},"choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}]}`,
      `{${up},"choices":[],"usage":{"prompt_tokens":3,"total_tokens":4,"completion_tokens":1,"prompt_tokens_details":null}}`,
    ]
    const framings: UsageFraming[] = [
      { includeUsage: false, continuous: false },
      { includeUsage: true, continuous: false },
      { includeUsage: true, continuous: true },
    ]

    // Act
    const pairs = framings.flatMap((framing) =>
      texts.map((text) => {
        const json = rewriteChunkJson(text, '"chatcmpl-1"', '"m"')
        const fromText = frameChunk(JSON.parse(text) as ChatCompletionChunk, framing, json)
        const serialised = frameChunk(JSON.parse(text) as ChatCompletionChunk, framing)
        return { json, fromText, serialised }
      }),
    )

    // Assess
    expect(pairs.every((p) => p.json !== undefined)).toBe(true)
    for (const { fromText, serialised } of pairs) {
      expect(fromText === undefined).toBe(serialised === undefined)
      if (fromText !== undefined) expect(parse(fromText)).toEqual(parse(serialised))
    }
    // Content chunks go out byte for byte as the upstream wrote them, less what framing drops.
    expect(pairs[2]?.fromText).toBe(
      `data: {${up},"choices":[{"index":0,"delta":{"content":"h\u00e9 👋"},"logprobs":null,"finish_reason":null}]}\n\n`,
    )
    expect(pairs[14]?.fromText).toBe(`data: ${texts[2]}\n\n`)
    expect(parse(pairs[0]?.fromText).prompt_token_ids).toBeNull()
  })
})
