import { describe, expect, it } from 'vitest'
import { StreamTally } from '#shared/inference/stream-tally'
import { estimatePromptTokens } from '#shared/inference/usage-meter'
import type { ChatCompletionChunk, ChatCompletionRequest } from '#shared/schemas/chat-completion'

const request = {
  model: 'm',
  messages: [{ role: 'user', content: 'Count the words in this prompt.' }],
} as ChatCompletionRequest

function chunk(
  choices: { index?: number; content?: string; reasoning?: string; role?: string; finish?: string | null }[],
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number },
): ChatCompletionChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: choices.map((c) => ({
      index: c.index ?? 0,
      delta: {
        ...(c.role === undefined ? {} : { role: c.role }),
        ...(c.content === undefined ? {} : { content: c.content }),
        ...(c.reasoning === undefined ? {} : { reasoning: c.reasoning }),
      },
      logprobs: null,
      finish_reason: c.finish ?? null,
    })),
    ...(usage === undefined
      ? {}
      : { usage: { total_tokens: usage.prompt_tokens + usage.completion_tokens, ...usage } }),
  } as ChatCompletionChunk
}

describe('StreamTally', () => {
  it("takes the upstream's final usage chunk when it carries both counts", () => {
    // Prepare
    const tally = new StreamTally(request, false)

    // Act
    tally.observe(chunk([{ role: 'assistant', content: '' }]))
    tally.observe(chunk([{ content: 'Hello' }]))
    tally.observe(chunk([{ content: ' there', finish: 'stop' }]))
    tally.observe(chunk([], { prompt_tokens: 11, completion_tokens: 7 }))

    // Assess
    expect(tally.reportedFinalUsage).toBe(true)
    expect(tally.outcome(false).usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 })
    expect(tally.outcome(false).contents).toBeUndefined()
    expect(tally.last?.choices).toEqual([])
  })

  it('sums the continuous per-choice counts when no final usage came (the latest count of each choice)', () => {
    // Prepare
    const tally = new StreamTally(request, false)

    // Act
    tally.observe(chunk([{ index: 0, content: 'a' }], { prompt_tokens: 9, completion_tokens: 1 }))
    tally.observe(chunk([{ index: 1, content: 'b' }], { prompt_tokens: 9, completion_tokens: 1 }))
    tally.observe(chunk([{ index: 0, content: 'cc' }], { prompt_tokens: 9, completion_tokens: 3 }))

    // Assess
    expect(tally.reportedFinalUsage).toBe(false)
    expect(tally.outcome(true)).toMatchObject({ usage: { prompt_tokens: 9, completion_tokens: 4 }, aborted: true })
  })

  it('counts one token per non-empty content or reasoning delta and estimates the prompt without any usage', () => {
    // Prepare
    const tally = new StreamTally(request, false)

    // Act
    tally.observe(chunk([{ role: 'assistant', content: '' }]))
    tally.observe(chunk([{ reasoning: 'think' }]))
    tally.observe(chunk([{ content: 'one' }, { index: 1, content: 'two' }]))
    tally.observe(chunk([{ content: '' }]))

    // Assess
    expect(tally.outcome(false).usage).toEqual({
      prompt_tokens: estimatePromptTokens(request),
      completion_tokens: 3,
    })
  })

  it('ignores a final usage chunk without both counts and falls back to the deltas', () => {
    // Prepare
    const tally = new StreamTally(request, false)
    const partial = chunk([], { prompt_tokens: 5, completion_tokens: 0 })
    delete (partial.usage as { completion_tokens?: number }).completion_tokens

    // Act
    tally.observe(chunk([{ content: 'x' }]))
    tally.observe(partial)

    // Assess
    expect(tally.outcome(false).usage.completion_tokens).toBe(1)
  })

  it('assembles each choice’s text and finish reason when collecting, and reports the error it is given', () => {
    // Prepare
    const tally = new StreamTally(request, true)
    const error = new Error('upstream went away')

    // Act
    tally.observe(
      chunk([
        { index: 0, content: 'Hel' },
        { index: 1, content: 'Bye' },
      ]),
    )
    tally.observe(chunk([{ index: 0, content: 'lo', finish: 'stop' }]))
    tally.observe(chunk([{ index: 1, content: '!', finish: 'length' }]))

    // Assess
    expect(tally.outcome(false, error)).toMatchObject({
      contents: ['Hello', 'Bye!'],
      finishReasons: ['stop', 'length'],
      aborted: false,
      error,
    })
  })

  it('counts nothing for a stream that failed before its first chunk, where the engine generated nothing', async () => {
    // Prepare
    const tally = new StreamTally(request, true)
    const error = new Error('upstream first-byte timeout')

    // Act
    const outcome = tally.outcome(false, error)

    // Assess
    expect(outcome).toMatchObject({ usage: { prompt_tokens: 0, completion_tokens: 0 }, unserved: true, error })
  })

  it('assembles reasoning, tool calls and logprobs per choice when collecting, as a JSON answer has them', () => {
    // Prepare
    const tally = new StreamTally(request, true)
    const lp = (token: string) => ({ token, logprob: -0.5, bytes: null, top_logprobs: [] })
    const raw = (index: number, delta: Record<string, unknown>, logprobs: unknown = null) =>
      ({
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index, delta, logprobs, finish_reason: null }],
      }) as ChatCompletionChunk

    // Act
    tally.observe(raw(0, { role: 'assistant', content: '' }))
    tally.observe(raw(0, { reasoning: 'Think' }, { content: [lp('Think')] }))
    tally.observe(raw(0, { reasoning: 'ing' }, { content: [lp('ing')] }))
    tally.observe(
      raw(0, { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '' } }] }),
    )
    tally.observe(raw(0, { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }))
    tally.observe(raw(0, { tool_calls: [{ index: 0, function: { arguments: '1}' } }] }))
    tally.observe(raw(1, { role: 'assistant', content: '' }))
    tally.observe(raw(1, { reasoning_content: 'Old-style' }))
    tally.observe(raw(1, { content: 'Hi' }))

    // Assess
    const outcome = tally.outcome(false)
    expect(outcome.contents).toEqual(['', 'Hi'])
    expect(outcome.extras).toEqual([
      {
        reasoning: 'Thinking',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }],
        logprobs: [lp('Think'), lp('ing')],
      },
      { reasoning_content: 'Old-style' },
    ])
  })
})
