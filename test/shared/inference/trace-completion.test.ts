import { describe, expect, it } from 'vitest'
import { summaryUsage, traceOptedOut } from '#shared/inference/trace-completion'

describe('summaryUsage', () => {
  it('keeps the prompt details and their cached tokens as cache_read_input_tokens, the key costs read', () => {
    // Act
    const usage = summaryUsage({
      prompt_tokens: 59,
      completion_tokens: 8,
      prompt_tokens_details: { cached_tokens: 48 },
    })

    // Assess
    expect(usage).toEqual({
      prompt_tokens: 59,
      completion_tokens: 8,
      total_tokens: 67,
      requests: 1,
      prompt_tokens_details: { cached_tokens: 48 },
      cache_read_input_tokens: 48,
    })
  })

  it('adds no cache keys when the upstream reported no prompt details', () => {
    // Act
    const absent = summaryUsage({ prompt_tokens: 5, completion_tokens: 3 })
    const empty = summaryUsage({ prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: null })

    // Assess
    const counts = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, requests: 1 }
    expect(absent).toEqual(counts)
    expect(empty).toEqual(counts)
  })
})

describe('traceOptedOut', () => {
  it('reads off, false, 0 and no in any case and spacing as opting out, anything else as not', () => {
    // Act
    const out = ['off', ' OFF ', 'false', '0', 'No'].map(traceOptedOut)
    const kept = [undefined, '', 'on', 'true', '1'].map(traceOptedOut)

    // Assess
    expect(out).toEqual([true, true, true, true, true])
    expect(kept).toEqual([false, false, false, false, false])
  })
})
