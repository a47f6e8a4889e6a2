import { Rng, topTokens } from '#shared/engine/sampler'
import { clampLogprob, type Job, type LogprobEntry, Sequence, tokenLabel } from '#shared/engine/sequence'
import { EOS_TOKEN_ID, tokenBytes } from '#shared/engine/tokenizer'

/** A finished beam: its sequence (text, tokens, finish reason) and score. */
export type Beam = { sequence: Sequence; score: number; logprobs: LogprobEntry[] }

type Candidate = { tokens: number[]; logprobs: number[]; entries: LogprobEntry[]; cum: number }

// vLLM's `get_beam_search_score`: cumulative logprob over (prompt + output length) ** length_penalty, EOS not counted.
function score(job: Job, c: Candidate, lengthPenalty: number): number {
  let length = job.prompt.length + c.tokens.length
  if (c.tokens[c.tokens.length - 1] === EOS_TOKEN_ID) length--
  return c.cum / length ** lengthPenalty
}

function replay(job: Job, c: Candidate): Sequence {
  const seq = new Sequence(job, new Rng('beam'))
  for (const [i, t] of c.tokens.entries()) seq.append(t, c.logprobs[i] as number)
  return seq
}

/**
 * Beam search as vLLM's serving layer runs it: each step expands every live beam by its 2×width most likely tokens
 * (masks and penalties applied, no temperature), moves beams ending in EOS to the finished set, keeps the `width` best
 * by cumulative logprob, and finally returns the `width` best by length-penalised score. `yieldEvery` lets other
 * requests run between steps.
 */
export async function beamSearch(job: Job, width: number, yieldEvery: () => Promise<boolean>): Promise<Beam[]> {
  const { params } = job
  const greedyJob: Job = { ...job, params: { ...params, sampling: { ...params.sampling, temperature: 0 } } }
  let live: Candidate[] = [{ tokens: [], logprobs: [], entries: [], cum: 0 }]
  const finished: Candidate[] = []
  while (live.length > 0) {
    const next: Candidate[] = []
    for (const beam of live) {
      const seq = replay(greedyJob, beam)
      const dist = seq.distribution()
      for (const [token, lp] of topTokens(dist, 2 * width)) {
        if (lp === Number.NEGATIVE_INFINITY) continue
        const entry: LogprobEntry = {
          token: tokenLabel(token, params.tokensAsIds),
          logprob: clampLogprob(lp),
          bytes: tokenBytes(token),
          top_logprobs: params.logprobs
            ? topTokens(dist, params.topLogprobs).map(([t, v]) => ({
                token: tokenLabel(t, params.tokensAsIds),
                logprob: clampLogprob(v),
                bytes: tokenBytes(t),
              }))
            : [],
        }
        const child: Candidate = {
          tokens: [...beam.tokens, token],
          logprobs: [...beam.logprobs, lp],
          entries: [...beam.entries, entry],
          cum: beam.cum + lp,
        }
        if (token === EOS_TOKEN_ID && !params.ignoreEos) finished.push(child)
        else if (child.tokens.length >= params.maxTokens) finished.push(child)
        else next.push(child)
      }
    }
    next.sort((a, b) => b.cum - a.cum)
    live = next.slice(0, width)
    if (!(await yieldEvery())) break
  }
  finished.push(...live)
  const ranked = finished
    .map((c) => ({ c, s: score(job, c, params.lengthPenalty) }))
    .sort((a, b) => b.s - a.s)
    .slice(0, width)
  return ranked.map(({ c, s }) => {
    const sequence = replay(job, c)
    if (c.tokens[c.tokens.length - 1] === EOS_TOKEN_ID && !params.ignoreEos) sequence.stopReason = EOS_TOKEN_ID
    return { sequence, score: s, logprobs: c.entries }
  })
}
