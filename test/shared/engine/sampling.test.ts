import fc from 'fast-check'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { applyBiasAndPenalties, finalDistribution, type SamplingOptions } from '#shared/engine/sampler'
import { Sequence } from '#shared/engine/sequence'
import { decode, EOS_TOKEN_ID, encode, tokenBytes, tokenText, VOCAB_SIZE } from '#shared/engine/tokenizer'
import type { ChatCompletionRequest, ChatCompletionResponse } from '#shared/schemas/chat-completion'
import { ask, complete, type Entry, logprobsOf, model, streamAll, text } from './support.js'

// This file loads fresh copies of modules; the worker's next file starts from a clean registry (test files share
// their worker: vitest.config.ts, `isolate: false`).
afterAll(() => {
  vi.resetModules()
})

// A model that reports the whole vocabulary (`top_logprobs: -1`, tokens as ids since byte tokens share a text), and a
// step's distribution whatever its order.
const everyLogprob = model({ id: 'loom/every-logprob', backend: { kind: 'reference', settings: { maxLogprobs: -1 } } })
const everyLogprobRequest = { logprobs: true, top_logprobs: -1, return_tokens_as_token_ids: true }
const distributionOf = (entry: Entry | undefined) =>
  Object.fromEntries((entry?.top_logprobs ?? []).map((t) => [t.token, t.logprob]))

const RAISE_N = 'To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.'

const neutral: SamplingOptions = {
  temperature: 1,
  topK: 0,
  topP: 1,
  minP: 0,
  presencePenalty: 0,
  frequencyPenalty: 0,
  repetitionPenalty: 1,
  logitBias: new Map(),
}

describe('sampler', () => {
  it('applies bias, then repetition over prompt and output and frequency/presence over output only', () => {
    // Prepare
    const logits = new Float64Array(VOCAB_SIZE).fill(-1)
    logits[1] = 2
    const options = {
      ...neutral,
      repetitionPenalty: 2,
      frequencyPenalty: 0.5,
      presencePenalty: 0.25,
      logitBias: new Map([[3, 5]]),
    }

    // Act
    applyBiasAndPenalties(logits, options, new Set([1, 2]), new Map([[2, 3]]))

    // Assess
    expect(logits[1]).toBe(1)
    expect(logits[2]).toBe(-2 - 1.5 - 0.25)
    expect(logits[3]).toBe(4)
    expect(logits[4]).toBe(-1)
  })

  it('keeps exactly top_k tokens, the top_p nucleus and the min_p band', () => {
    // Prepare
    const logits = Float64Array.from({ length: VOCAB_SIZE }, (_, i) =>
      i < 4 ? Math.log([0.5, 0.3, 0.15, 0.05][i] as number) : -Infinity,
    )

    // Act
    const topK = finalDistribution(logits, { ...neutral, topK: 2 })
    const topP = finalDistribution(logits, { ...neutral, topP: 0.7 })
    const minP = finalDistribution(logits, { ...neutral, minP: 0.5 })

    // Assess
    const kept = (d: Float64Array) => [...d.keys()].filter((i) => (d[i] as number) > -Infinity)
    expect(kept(topK)).toEqual([0, 1])
    expect(Math.exp(topK[0] as number)).toBeCloseTo(0.625)
    expect(kept(topP)).toEqual([0, 1])
    expect(kept(minP)).toEqual([0, 1])
  })
})

describe('reference engine sampling', () => {
  it('gives the same output for the same seed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), fc.double({ min: 0.2, max: 1.5, noNaN: true }), async (seed, temperature) => {
        // Prepare
        const request = ask('Tell me a short story.', { seed, temperature, max_completion_tokens: 40, n: 2 })

        // Act
        const [a, b] = [await complete(request), await complete(request)]

        // Assess
        expect(a.choices.map((c) => c.message.content)).toEqual(b.choices.map((c) => c.message.content))
      }),
      { numRuns: 15 },
    )
  })

  it('draws unseeded requests from LOOM_ENGINE_SEED: the same sequence in a fresh process, different requests apart', async () => {
    // Prepare: two fresh engine module graphs, as two processes started with the same LOOM_ENGINE_SEED would be
    const request = ask('Tell me a short story.', { temperature: 1, max_completion_tokens: 30, n: 2 })
    const serve = async () => {
      vi.resetModules()
      const fresh = await import('./support.js')
      const answers: string[][] = []
      for (let i = 0; i < 3; i++)
        answers.push((await fresh.complete(request)).choices.map((c) => c.message.content ?? ''))
      return answers
    }

    // Act
    const first = await serve()
    const second = await serve()

    // Assess
    expect(process.env.LOOM_ENGINE_SEED).toMatch(/^\d+$/)
    expect(second).toEqual(first)
    expect(new Set(first.flat()).size).toBeGreaterThan(1)
  })

  it('reports raw logprobs: greedy takes the top entry of the model distribution', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 30 }), async (question) => {
        // Act
        const response = await complete(
          ask(question, { temperature: 0, logprobs: true, top_logprobs: 3, max_completion_tokens: 20 }),
        )

        // Assess
        for (const entry of logprobsOf(response)) {
          expect(entry.top_logprobs[0]?.token).toBe(entry.token)
          expect(entry.top_logprobs[0]?.logprob).toBe(entry.logprob)
        }
      }),
      { numRuns: 15 },
    )
  })

  it('reports the same raw distribution whatever temperature, top-k/top-p/min-p, penalties and bias do', async () => {
    // Prepare
    const base = ask('Hello', { seed: 4, max_completion_tokens: 1, ...everyLogprobRequest })
    const plain = logprobsOf(await complete(base, everyLogprob))[0]
    const ranked = [...(plain?.top_logprobs ?? [])].sort((a, b) => b.logprob - a.logprob)
    const twentieth = ranked[19]
    const forced = twentieth?.token ?? ''

    // Act
    const processed = await Promise.all(
      [
        { temperature: 0.2, top_k: 3, top_p: 0.5, min_p: 0.1 },
        { repetition_penalty: 1.8, presence_penalty: 2, frequency_penalty: 2 },
        { temperature: 1.7, logit_bias: { [forced.slice('token_id:'.length)]: 100 } },
      ].map(async (p) => logprobsOf(await complete({ ...base, ...p }, everyLogprob))[0]),
    )

    // Assess
    for (const entry of processed) expect(distributionOf(entry)).toEqual(distributionOf(plain))
    const biased = processed[2]
    expect(biased?.token).toBe(forced)
    // The bias made the token certain, but its raw logprob is the model's own: the 20th most likely.
    expect(biased?.logprob).toBe(twentieth?.logprob)
    expect(Math.exp(biased?.logprob ?? 0)).toBeLessThan(0.5)
  })

  it('lists the sampled token first in top_logprobs, then the most likely others, as vLLM does', async () => {
    // Prepare
    const request = (k: number, stream = false) =>
      ask('Tell me a story about a weaver.', {
        temperature: 1.5,
        seed: 7,
        max_completion_tokens: 40,
        logprobs: true,
        top_logprobs: k,
        return_tokens_as_token_ids: true,
        stream,
      })
    const streamed = async (k: number) => {
      const chunks = await streamAll(request(k, true), everyLogprob)
      return chunks.flatMap((c) =>
        c.choices.flatMap((ch) => (ch.logprobs as { content: Entry[] } | null)?.content ?? []),
      )
    }

    // Act
    const full = logprobsOf(await complete(request(-1), everyLogprob))
    const byK = await Promise.all([1, 2, 5].map(async (k) => logprobsOf(await complete(request(k), everyLogprob))))
    const streamedByK = await Promise.all([1, 2, 5].map(streamed))
    const none = logprobsOf(await complete(request(0), everyLogprob))

    // Assess
    expect(full.length).toBeGreaterThan(0)
    for (const entry of full) {
      expect(entry.top_logprobs).toHaveLength(VOCAB_SIZE)
      expect(new Set(entry.top_logprobs.map((t) => t.token)).size).toBe(VOCAB_SIZE)
      expect(entry.top_logprobs[0]).toMatchObject({ token: entry.token, logprob: entry.logprob })
      const rest = entry.top_logprobs.slice(1).map((t) => t.logprob)
      expect(rest).toEqual([...rest].sort((a, b) => b - a))
    }
    // At some step the sampler picked a token other than the most likely, which still comes first.
    expect(full.some((e) => e.top_logprobs.some((t) => t.logprob > e.logprob))).toBe(true)
    for (const [i, k] of [1, 2, 5].entries()) {
      const cut = full.map((e) => ({ ...e, top_logprobs: e.top_logprobs.slice(0, k) }))
      expect(byK[i]).toEqual(cut)
      expect(streamedByK[i]).toEqual(cut)
    }
    expect(none.map((e) => e.top_logprobs)).toEqual(full.map(() => []))
  })

  it('samples only within top_k of the raw distribution', async () => {
    // Act
    const response = await complete(
      ask('Hello', { seed: 4, top_k: 3, logprobs: true, top_logprobs: 3, max_completion_tokens: 15 }),
    )

    // Assess
    const content = logprobsOf(response)
    expect(content.length).toBeGreaterThan(0)
    for (const entry of content) expect(entry.top_logprobs.map((t) => t.token)).toContain(entry.token)
  })

  it('never leaks a stop string unless asked, and cuts exactly where it first appears', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer(),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 4 }),
        async (seed, at, length) => {
          // Prepare
          const base = ask('Describe a garden in the morning.', { seed, max_completion_tokens: 50 })
          const full = text(await complete(base))
          const stop = full.slice(at, at + length)
          fc.pre(stop.length === length)

          // Act
          const cut = await complete({ ...base, stop: [stop] })
          const kept = await complete({ ...base, stop: stop, include_stop_str_in_output: true })
          const streamed = (await streamAll({ ...base, stop: [stop] }))
            .map((c) => c.choices[0]?.delta.content ?? '')
            .join('')

          // Assess
          const first = full.indexOf(stop)
          expect(text(cut)).toBe(full.slice(0, first))
          expect(cut.choices[0]?.finish_reason).toBe('stop')
          expect(cut.choices[0]?.stop_reason).toBe(stop)
          expect(text(kept)).toBe(full.slice(0, first + stop.length))
          expect(streamed).toBe(full.slice(0, first))
        },
      ),
      { numRuns: 20 },
    )
  })

  it('stops at the first stop string in list order that the latest token completes, as vLLM does', async () => {
    // Prepare
    const base = ask('Describe your work.', {
      structured_outputs: { regex: 'A tracing loom' },
      max_completion_tokens: 30,
    })
    // A special token adds its whole text at once, so two stop strings can complete in it at different ends.
    const special = ask('Say hello.', { temperature: 0, ignore_eos: true, skip_special_tokens: false, max_tokens: 40 })
    const outcome = (r: ChatCompletionResponse) => [text(r), r.choices[0]?.stop_reason]

    // Act
    const gFirst = await complete({ ...base, stop: ['g', 'ing'] })
    const ingFirst = await complete({ ...base, stop: ['ing', 'g'] })
    const keptG = await complete({ ...base, stop: ['g', 'ing'], include_stop_str_in_output: true })
    const keptIng = await complete({ ...base, stop: ['ing', 'g'], include_stop_str_in_output: true })
    const streamed = await streamAll({ ...base, stop: ['g', 'ing'] })
    const full = text(await complete(special))
    const cutEnd = await complete({ ...special, stop: ['_end', '<|im_'] })
    const keptEnd = await complete({ ...special, stop: ['_end', '<|im_'], include_stop_str_in_output: true })

    // Assess
    expect(outcome(gFirst)).toEqual(['A tracin', 'g'])
    expect(outcome(ingFirst)).toEqual(['A trac', 'ing'])
    expect(outcome(keptG)).toEqual(['A tracing', 'g'])
    expect(outcome(keptIng)).toEqual(['A tracing', 'ing'])
    expect(streamed.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('A tracin')
    expect(streamed.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.stop_reason).toBe('g')
    const at = full.indexOf(' <|im_end|>')
    expect(at).toBeGreaterThan(0)
    expect(full.slice(0, at)).not.toMatch(/_end|<\|im_/)
    expect(outcome(cutEnd)).toEqual([full.slice(0, at + ' <|im'.length), '_end'])
    expect(outcome(keptEnd)).toEqual([full.slice(0, at + ' <|im_end'.length), '_end'])
  })

  it('returns n choices with their own indexes and sums their tokens in usage', async () => {
    // Act
    const response = await complete(ask('Say hello.', { n: 3, seed: 9, max_completion_tokens: 12 }))

    // Assess
    expect(response.choices.map((c) => c.index)).toEqual([0, 1, 2])
    expect(new Set(response.choices.map((c) => c.message.content)).size).toBeGreaterThan(1)
    const total = response.choices.reduce(
      (s, c) => s + encode(c.message.content ?? '').length + (c.finish_reason === 'stop' ? 1 : 0),
      0,
    )
    expect(response.usage.completion_tokens).toBe(total)
  })

  it('returns distinct beams ordered by length-penalised cumulative logprob', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 4 }), fc.constantFrom(0, 0.5, 1, 2), async (n, length_penalty) => {
        // Act
        const response = await complete(
          ask('What is the capital of France?', {
            use_beam_search: true,
            n,
            length_penalty,
            max_completion_tokens: 12,
            logprobs: true,
            return_token_ids: true,
            // With it a beam's EOS stays in its token ids and logprobs, so the whole score can be recomputed.
            include_stop_str_in_output: true,
          }),
        )

        // Assess
        const scores = response.choices.map((c) => {
          const ids = c.token_ids ?? []
          const cum = logprobsOf(response, c.index).reduce((s, e) => s + e.logprob, 0)
          const length = response.usage.prompt_tokens + ids.length - (ids[ids.length - 1] === EOS_TOKEN_ID ? 1 : 0)
          return cum / length ** length_penalty
        })
        expect(response.choices).toHaveLength(n)
        expect(new Set(response.choices.map((c) => JSON.stringify(c.token_ids))).size).toBe(n)
        for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeLessThanOrEqual((scores[i - 1] as number) + 1e-9)
        for (const c of response.choices)
          expect(c.finish_reason === 'length' || c.stop_reason === EOS_TOKEN_ID).toBe(true)
      }),
      { numRuns: 8 },
    )
  })

  it('ignores stop and stop_token_ids in beam search, as vLLM does, so no beam is cut short or mislabelled', async () => {
    // Prepare: unconstrained, the best beam says "capital" and contains "p" (token 112)
    const base = ask('Tell me about the capital of France.', {
      use_beam_search: true,
      n: 2,
      max_tokens: 20,
      return_token_ids: true,
    })

    // Act
    const plain = await complete(base)
    const stopped = await complete({ ...base, stop: ['capital'], stop_token_ids: [112] })

    // Assess
    expect(plain.choices.some((c) => c.message.content?.includes('capital'))).toBe(true)
    expect(stopped.choices.map((c) => c.message.content)).toEqual(plain.choices.map((c) => c.message.content))
    for (const c of stopped.choices) {
      expect(c.message.content).toBe(decode((c.token_ids ?? []).filter((t) => t !== EOS_TOKEN_ID)))
      expect([
        ['length', null],
        ['stop', EOS_TOKEN_ID],
      ]).toContainEqual([c.finish_reason, c.stop_reason])
    }
  })

  it('keeps the EOS that ends a beam out of its token ids, logprobs and usage unless include_stop_str_in_output', async () => {
    // Prepare: at this length the best beams end at EOS
    const base = ask('What is the capital of France?', {
      use_beam_search: true,
      n: 2,
      max_tokens: 40,
      logprobs: true,
      return_token_ids: true,
    })

    // Act
    const plain = await complete(base)
    const kept = await complete({ ...base, include_stop_str_in_output: true })

    // Assess
    expect(plain.choices.some((c) => c.stop_reason === EOS_TOKEN_ID)).toBe(true)
    for (const c of plain.choices) {
      expect(c.token_ids).not.toContain(EOS_TOKEN_ID)
      expect(logprobsOf(plain, c.index)).toHaveLength(c.token_ids?.length ?? -1)
    }
    const lengths = (r: ChatCompletionResponse) => r.choices.reduce((s, c) => s + (c.token_ids?.length ?? 0), 0)
    expect(plain.usage.completion_tokens).toBe(lengths(plain))
    for (const [i, c] of kept.choices.entries()) {
      const eos = c.stop_reason === EOS_TOKEN_ID ? [EOS_TOKEN_ID] : []
      expect(c.token_ids).toEqual([...(plain.choices[i]?.token_ids ?? []), ...eos])
      expect(logprobsOf(kept, c.index)).toHaveLength(c.token_ids?.length ?? -1)
      expect(c.message.content).toBe(plain.choices[i]?.message.content)
    }
    expect(kept.usage.completion_tokens).toBe(lengths(kept))
  })

  it.each([
    ['logit_bias', { logit_bias: { '72': 100 } }],
    ['penalties', { presence_penalty: 2, frequency_penalty: 2, repetition_penalty: 2 }],
    ['allowed_token_ids', { allowed_token_ids: [72, 101] }],
    ['bad_words', { bad_words: ['Paris', 'The', 'capital'] }],
    ['min_tokens', { min_tokens: 30 }],
  ] satisfies [string, Partial<ChatCompletionRequest>][])(
    'ignores %s in beam search, as vLLM does',
    async (_, extra) => {
      // Prepare
      const base = ask('What is the capital of France?', { use_beam_search: true, n: 2, max_tokens: 40 })

      // Act
      const plain = await complete(base)
      const varied = await complete({ ...base, ...extra })

      // Assess
      expect(varied.choices.map((c) => c.message.content)).toEqual(plain.choices.map((c) => c.message.content))
    },
  )

  it('returns null prompt_logprobs in beam search, as vLLM does', async () => {
    // Act
    const response = await complete(
      ask('What is the capital of France?', { use_beam_search: true, n: 2, max_tokens: 4, prompt_logprobs: 1 }),
    )

    // Assess
    expect(response.prompt_logprobs).toBeNull()
    expect(response.choices).toHaveLength(2)
  })

  it('extends each beam by one token per step instead of replaying it from the start', async () => {
    // Prepare
    const [n, maxTokens] = [2, 60]
    const append = vi.spyOn(Sequence.prototype, 'append')

    // Act
    const response = await complete(
      ask('Tell me about the capital of France.', {
        use_beam_search: true,
        n,
        max_tokens: maxTokens,
        ignore_eos: true,
      }),
    )
    const appended = append.mock.calls.length
    append.mockRestore()

    // Assess: one append per kept beam and step, then one per token of each returned beam (replays would be ~n·L²/2)
    expect(response.choices.map((c) => c.finish_reason)).toEqual(['length', 'length'])
    expect(appended).toBeLessThanOrEqual(2 * n * maxTokens)
  })

  it('treats top_k 1, a tiny top_p and min_p 1 like greedy decoding', async () => {
    // Prepare
    const base = ask('Why is the sky blue?', { seed: 3, max_completion_tokens: 30 })

    // Act
    const greedy = text(await complete({ ...base, temperature: 0 }))
    const variants = await Promise.all(
      [{ top_k: 1 }, { top_p: 1e-6 }, { min_p: 1 }].map((p) => complete({ ...base, ...p })),
    )

    // Assess
    for (const v of variants) expect(text(v)).toBe(greedy)
  })

  it('applies logit_bias, allowed_token_ids and bad_words', async () => {
    // Prepare
    const z = 'Z'.charCodeAt(0)
    const allowed = [...encode('ab '), EOS_TOKEN_ID]

    // Act
    const biased = await complete(ask('Hi', { logit_bias: { [z]: 100 }, temperature: 0, max_completion_tokens: 5 }))
    const restricted = await complete(
      ask('Hi', { allowed_token_ids: allowed, seed: 1, max_completion_tokens: 20, return_token_ids: true }),
    )
    const banned = await Promise.all(
      [1, 2, 3, 4].map((seed) =>
        complete(ask('Tell me a short story.', { bad_words: ['the', 'a'], seed, max_completion_tokens: 60 })),
      ),
    )

    // Assess
    expect(text(biased)).toBe('ZZZZZ')
    expect(restricted.choices[0]?.token_ids?.every((t) => allowed.includes(t))).toBe(true)
    for (const r of banned) {
      expect(text(r)).not.toContain('the')
      expect(text(r)).not.toContain('a')
    }
  })

  it('narrows a grammar with allowed_token_ids, and never leaves nothing to sample when masks conflict', async () => {
    // Prepare
    const cd = [...encode('cd'), EOS_TOKEN_ID]

    // Act
    const narrowed = await complete(
      ask('x', { structured_outputs: { choice: ['ab', 'cd'] }, allowed_token_ids: cd, seed: 1 }),
    )
    const conflicting = await complete(
      ask('x', { allowed_token_ids: [EOS_TOKEN_ID], min_tokens: 5, max_completion_tokens: 8 }),
    )

    // Assess
    expect(text(narrowed)).toBe('cd')
    expect(conflicting.usage.completion_tokens).toBeGreaterThanOrEqual(1)
  })

  it('rejects out-of-vocabulary logit_bias and allowed_token_ids, and too many logprobs', async () => {
    // Act
    const bias = complete(ask('Hi', { logit_bias: { '999': 1 } }))
    const allowed = complete(ask('Hi', { allowed_token_ids: [5000] }))
    const logprobs = complete(ask('Hi', { logprobs: true, top_logprobs: 21 }))

    // Assess
    await expect(bias).rejects.toMatchObject({
      statusCode: 400,
      param: 'logit_bias',
      message: expect.stringContaining('Vocabulary size: 262'),
    })
    await expect(allowed).rejects.toThrow('allowed_token_ids contains out-of-vocab token id!')
    await expect(logprobs).rejects.toThrow('Requested sample logprobs of 21, which is greater than max allowed: 20')
  })

  it("takes logit_bias keys as Python's int() does and rejects the others with a 400", async () => {
    // Prepare: 'Z' is token 90; int() allows surrounding whitespace, a sign and underscores between digits.
    const keys = ['', ' ', '0x10', '1e2', '1.0', '_1', '1_', '1__0', '+_1', '1 2']

    // Act
    const biased = await complete(
      ask('Hi', { logit_bias: { ' +9_0\n': 100 }, temperature: 0, max_completion_tokens: 5 }),
    )
    const rejected = complete(ask('Hi', { logit_bias: Object.fromEntries(keys.map((k) => [k, 1])) }))
    const outOfVocab = complete(ask('Hi', { logit_bias: { ' 0999 ': 1, '-1': 1 } }))

    // Assess
    expect(text(biased)).toBe('ZZZZZ')
    await expect(rejected).rejects.toMatchObject({
      statusCode: 400,
      param: 'logit_bias',
      message:
        "logit_bias contains key(s) that cannot be converted to integer token IDs: ['', ' ', '0x10', '1e2', '1.0', '_1', '1_', '1__0', '+_1', '1 2']",
    })
    await expect(outOfVocab).rejects.toMatchObject({
      statusCode: 400,
      message: 'token_id(s) [999, -1] in logit_bias contain out-of-vocab token ids. Vocabulary size: 262',
    })
  })

  it('rejects an n above the maxN of the model before allocating any sequence', async () => {
    // Act
    const huge = complete(ask('Hi', { n: 1.7976931348623157e308, max_completion_tokens: 4 }))
    const beams = complete(ask('Hi', { n: 129, use_beam_search: true, max_completion_tokens: 4 }))
    const atCap = await complete(ask('Hi', { n: 128, max_completion_tokens: 1 }))

    // Assess
    // vLLM raises the n check without a parameter: the error names none.
    await expect(huge).rejects.toMatchObject({
      statusCode: 400,
      param: undefined,
      message: `n must be at most 128, got ${BigInt(1.7976931348623157e308)}. ${RAISE_N}`,
    })
    await expect(beams).rejects.toThrow(`n must be at most 128, got 129. ${RAISE_N}`)
    expect(atCap.choices).toHaveLength(128)
  })

  it('honours min_tokens, stop_token_ids and ignore_eos', async () => {
    // Prepare
    const space = ' '.charCodeAt(0)

    // Act
    const stopped = await complete(
      ask('Tell me a short story.', { stop_token_ids: [space], min_tokens: 10, seed: 2, max_completion_tokens: 80 }),
    )
    const endless = await complete(ask('Say hello.', { ignore_eos: true, temperature: 0, max_completion_tokens: 60 }))

    // Assess
    expect(stopped.usage.completion_tokens).toBeGreaterThanOrEqual(10)
    expect(stopped.choices[0]?.finish_reason).toBe('stop')
    expect(stopped.choices[0]?.stop_reason).toBe(space)
    expect(text(stopped).endsWith(' ')).toBe(false)
    expect(endless.usage.completion_tokens).toBe(60)
    expect(endless.choices[0]?.finish_reason).toBe('length')
  })

  it('bounds output by the context window and rejects requests that cannot fit', async () => {
    // Prepare
    const small = model({ maxModelLen: 80 })

    // Act
    const filled = await complete(ask('Hi', { ignore_eos: true }), small)
    const tooLong = complete(ask('Hi', { max_completion_tokens: 79 }), small)
    const hugePrompt = complete(ask('x'.repeat(100)), small)
    const overWindow = complete(ask('Hi', { max_completion_tokens: 81 }), small)

    // Assess
    expect(filled.usage.total_tokens).toBe(80)
    expect(filled.choices[0]?.finish_reason).toBe('length')
    await expect(tooLong).rejects.toMatchObject({
      param: 'input_tokens',
      message: expect.stringMatching(
        /^You passed \d+ input tokens and requested 79 output tokens\. However, the model's context length is only 80 tokens, resulting in a maximum input length of 1 tokens\./,
      ),
    })
    await expect(hugePrompt).rejects.toMatchObject({
      param: 'input_tokens',
      message: expect.stringContaining('and requested 0 output tokens.'),
    })
    await expect(overWindow).rejects.toMatchObject({
      param: 'max_completion_tokens',
      message:
        'max_completion_tokens=81cannot be greater than max_model_len=max_total_tokens=80. Please request fewer output tokens.',
    })
  })

  it('returns token ids, ids as token strings, and special tokens when not skipped', async () => {
    // Act
    const response = await complete(
      ask('Say hello.', {
        temperature: 0,
        return_token_ids: true,
        logprobs: true,
        return_tokens_as_token_ids: true,
        skip_special_tokens: false,
        include_stop_str_in_output: true,
        max_completion_tokens: 60,
      }),
    )

    // Assess
    const choice = response.choices[0]
    expect(decode(response.prompt_token_ids ?? [])).toContain('Say hello.')
    expect(choice?.token_ids?.at(-1)).toBe(EOS_TOKEN_ID)
    expect(choice?.message.content).toBe(decode(choice?.token_ids ?? [], { skipSpecialTokens: false }))
    expect(choice?.message.content?.endsWith(' <|im_end|>')).toBe(true)
    expect(logprobsOf(response).map((e) => e.token)).toEqual(choice?.token_ids?.map((t) => `token_id:${t}`))
  })

  it('gives top_logprobs the bytes of their token_id label but keeps the real token in bytes and prompt logprobs', async () => {
    // Act
    const response = await complete(
      ask('Say hello.', {
        temperature: 0,
        logprobs: true,
        top_logprobs: 3,
        prompt_logprobs: 1,
        return_tokens_as_token_ids: true,
        max_completion_tokens: 4,
      }),
    )

    // Assess: vLLM's `_get_top_logprobs` encodes the label it shows; the main entry's bytes are the decoded token's,
    // and prompt logprobs keep the engine's detokenized `decoded_token`.
    const utf8 = new TextEncoder()
    for (const entry of logprobsOf(response)) {
      const id = Number(entry.token.slice('token_id:'.length))
      expect(entry.bytes).toEqual(tokenBytes(id))
      const top = entry.top_logprobs as unknown as { token: string; bytes: number[] }[]
      for (const t of top) expect(t.bytes).toEqual([...utf8.encode(t.token)])
    }
    const prompt = response.prompt_logprobs as (Record<string, { decoded_token: string }> | null)[]
    const ids = response.usage.prompt_tokens
    expect(prompt).toHaveLength(ids)
    for (const position of prompt.slice(1)) {
      for (const [id, lp] of Object.entries(position ?? {})) expect(lp.decoded_token).toBe(tokenText(Number(id)))
    }
  })

  it('echoes the final message and reports prompt logprobs', async () => {
    // Act
    const response = await complete({
      messages: [
        { role: 'user', content: 'Tell me a story.' },
        { role: 'assistant', content: 'Once upon a time' },
      ],
      add_generation_prompt: false,
      continue_final_message: true,
      echo: true,
      prompt_logprobs: 2,
      seed: 1,
      max_completion_tokens: 20,
    })

    // Assess
    expect(text(response).startsWith('Once upon a time')).toBe(true)
    const prompt = response.prompt_logprobs as (Record<string, { rank: number }> | null)[]
    expect(prompt).toHaveLength(response.usage.prompt_tokens)
    expect(prompt[0]).toBeNull()
    expect(Object.keys(prompt[1] ?? {}).length).toBeGreaterThanOrEqual(2)
  })

  it('scores each prompt token by the raw distribution that generation reports right after the tokens before it', async () => {
    // Prepare
    type Message = { role: 'system' | 'user' | 'assistant'; content: string }
    const conversations: Message[][] = [
      // QA's case: scored by a model that had seen the whole prompt, "qzxwv" came out as the likeliest continuation.
      [{ role: 'user', content: 'hello qzxwv' }],
      [
        { role: 'user', content: 'Tell me a short story.' },
        { role: 'assistant', content: 'Once upon a time, a weaver' },
      ],
      [
        { role: 'system', content: 'You are Loom.' },
        { role: 'user', content: 'What is Loom?' },
        { role: 'assistant', content: 'Loom is an open platform.' },
        { role: 'user', content: 'Why is the sky blue?' },
        { role: 'assistant', content: 'Because' },
      ],
    ]
    const continuing = (messages: Message[]) => ({
      messages,
      add_generation_prompt: false,
      continue_final_message: true,
      return_token_ids: true,
      max_completion_tokens: 1,
    })
    type Scored = { at: number; prefix: number[]; logprob: number | undefined; top: [string, number | undefined][] }
    const reported: Scored[] = []
    const generated: Scored[] = []

    // Act
    for (const messages of conversations) {
      const full = await complete({ ...continuing(messages), prompt_logprobs: 5 })
      const ids = full.prompt_token_ids ?? []
      const scored = full.prompt_logprobs as Record<string, { logprob: number }>[]
      for (const [m, message] of messages.entries()) {
        for (let cut = 1; cut <= message.content.length; cut++) {
          const prefix = [...messages.slice(0, m), { ...message, content: message.content.slice(0, cut) }]
          const at = (await complete(continuing(prefix))).prompt_token_ids?.length ?? 0
          if (at >= ids.length) continue
          const token = ids[at] as number
          const next = await complete({
            ...continuing(prefix),
            logprobs: true,
            top_logprobs: 5,
            allowed_token_ids: [token],
            return_tokens_as_token_ids: true,
          })
          const entry = logprobsOf(next)[0]
          const top = entry?.top_logprobs.map((t) => t.token.slice('token_id:'.length)) ?? []
          generated.push({
            at,
            prefix: next.prompt_token_ids ?? [],
            logprob: entry?.logprob,
            top: top.map((id, i) => [id, entry?.top_logprobs[i]?.logprob]),
          })
          reported.push({
            at,
            prefix: ids.slice(0, at),
            logprob: scored[at]?.[String(token)]?.logprob,
            top: top.map((id) => [id, scored[at]?.[id]?.logprob]),
          })
        }
      }
    }

    // Assess
    expect(reported.length).toBeGreaterThan(100)
    expect(reported).toEqual(generated)
  })

  it('finishes with repetition when the output repeats a pattern', async () => {
    // Act
    const response = await complete(
      ask('x', {
        structured_outputs: { regex: '(ab)+' },
        repetition_detection: { max_pattern_size: 2, min_count: 3 },
        // Without a floor the sampler may legally end after one "ab" (the regex accepts it) before repeating.
        min_tokens: 6,
        max_completion_tokens: 50,
      }),
    )

    // Assess
    expect(text(response)).toBe('ababab')
    expect(response.choices[0]?.finish_reason).toBe('repetition')
    expect(response.choices[0]?.stop_reason).toBe('repetition_detected')
  })

  it('rejects invalid repetition_detection settings', async () => {
    // Act
    const act = complete(ask('x', { repetition_detection: { max_pattern_size: 2, min_count: 1 } }))

    // Assess
    await expect(act).rejects.toThrow('min_count must be >= 2')
  })

  it('changes what is sampled under each penalty, while the reported logprobs stay raw', async () => {
    // Prepare
    const base = ask('Count from one to five.', { seed: 7, max_completion_tokens: 40, ...everyLogprobRequest })

    // Act
    const plain = await complete(base, everyLogprob)
    const penalised = await Promise.all(
      [{ repetition_penalty: 1.8 }, { frequency_penalty: 1.5 }, { presence_penalty: 2 }].map((p) =>
        complete({ ...base, ...p }, everyLogprob),
      ),
    )

    // Assess
    for (const run of penalised) {
      expect(text(run)).not.toBe(text(plain))
      // The first step has the same history in every run, so the same raw distribution.
      expect(distributionOf(logprobsOf(run)[0])).toEqual(distributionOf(logprobsOf(plain)[0]))
    }
  })
})
