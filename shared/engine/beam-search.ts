import { clampLogprob, type LogprobEntry, tokenLabel, topEntry } from '#shared/engine/logprob-entry'
import { Rng, topTokens } from '#shared/engine/sampler'
import { type Job, Sequence } from '#shared/engine/sequence'
import { EOS_TOKEN_ID, tokenBytes } from '#shared/engine/tokenizer'

/** A finished beam: its sequence (text, tokens, finish reason) and score. */
export type Beam = { sequence: Sequence; score: number; logprobs: LogprobEntry[] }

// A beam's tokens as a persistent list: a child shares its parent's, so extending a beam copies nothing.
type Path = { token: number; logprob: number; entry: LogprobEntry; length: number; prev: Path | null }
// A live beam keeps its decoding state and extends it by one token per step (replaying every beam from its start at
// every step made the search quadratic in its length).
type Live = { sequence: Sequence; path: Path | null; cum: number }
type Candidate = { parent: Live; path: Path; cum: number }
type Finished = { path: Path; cum: number }

// vLLM's `get_beam_search_score`: cumulative logprob over (prompt + output length) ** length_penalty, EOS not counted.
function score(job: Job, { path, cum }: Finished, lengthPenalty: number): number {
  let length = job.prompt.length + path.length
  if (path.token === EOS_TOKEN_ID) length--
  return cum / length ** lengthPenalty
}

// Each kept candidate continues its parent's sequence: a parent's last kept child takes the sequence over, the
// others get a fork of it, taken before the parent changes.
function extend(kept: Candidate[]): Live[] {
  const children = new Map<Live, number>()
  for (const c of kept) children.set(c.parent, (children.get(c.parent) ?? 0) + 1)
  return kept.map((c) => {
    const left = (children.get(c.parent) as number) - 1
    children.set(c.parent, left)
    const sequence = left === 0 ? c.parent.sequence : c.parent.sequence.fork()
    sequence.append(c.path.token, c.path.logprob)
    return { sequence, path: c.path, cum: c.cum }
  })
}

// The returned beam, decoded once from its path. As in vLLM, a beam ending at EOS keeps the EOS token (in its token ids,
// logprobs and `completion_tokens`) only with `include_stop_str_in_output`, and never in its text.
function materialise(job: Job, { path }: Finished): { sequence: Sequence; logprobs: LogprobEntry[] } {
  const steps: Path[] = []
  for (let p: Path | null = path; p !== null; p = p.prev) steps.push(p)
  steps.reverse()
  const eos = path.token === EOS_TOKEN_ID && !job.params.ignoreEos ? steps.pop() : undefined
  const sequence = new Sequence(job, new Rng('beam'))
  for (const step of steps) sequence.append(step.token, step.logprob)
  const logprobs = steps.map((s) => s.entry)
  if (eos) {
    sequence.stopAtEos(job.params.includeStopStr, eos.logprob)
    if (job.params.includeStopStr) logprobs.push(eos.entry)
  }
  return { sequence, logprobs }
}

/**
 * Beam search as vLLM's serving layer runs it: each step expands every live beam by its 2×width most likely tokens
 * (the engine's constraint applied; no request masks, bias, penalties or temperature), moves beams ending in EOS to
 * the finished set, keeps the `width` best by cumulative logprob, and finally returns the `width` best by
 * length-penalised score. `yieldEvery` lets other requests run between steps.
 */
export async function beamSearch(job: Job, width: number, yieldEvery: () => Promise<boolean>): Promise<Beam[]> {
  const { params } = job
  // vLLM's BeamSearchParams carry no `stop`, `stop_token_ids` or repetition detection: a beam ends at EOS (finish
  // reason `stop`, stop reason the EOS id) or at max_tokens (`length`) only, and its text is never cut. Each step's
  // SamplingParams hold only logprobs, max_tokens 1 and temperature (allowed tokens come from structured outputs
  // alone), so the request's `logit_bias`, penalties, `allowed_token_ids`, `bad_words` and `min_tokens` do not apply;
  // the engine's own constraint (grammar, reasoning budget) still does.
  const beamJob: Job = {
    ...job,
    params: {
      ...params,
      stop: [],
      stopTokenIds: [],
      repetition: undefined,
      allowedTokenIds: undefined,
      badWords: [],
      minTokens: 0,
      sampling: {
        ...params.sampling,
        presencePenalty: 0,
        frequencyPenalty: 0,
        repetitionPenalty: 1,
        logitBias: new Map(),
      },
    },
  }
  const greedy: Job = {
    ...beamJob,
    params: { ...beamJob.params, sampling: { ...beamJob.params.sampling, temperature: 0 } },
  }
  let live: Live[] = [{ sequence: new Sequence(greedy, new Rng('beam')), path: null, cum: 0 }]
  const finished: Finished[] = []
  while (live.length > 0) {
    const next: Candidate[] = []
    for (const beam of live) {
      const dist = beam.sequence.distribution()
      const top = params.logprobs
        ? topTokens(dist, params.topLogprobs).map(([t, v]) => topEntry(t, v, params.tokensAsIds))
        : []
      for (const [token, lp] of topTokens(dist, 2 * width)) {
        if (lp === Number.NEGATIVE_INFINITY) continue
        const entry: LogprobEntry = {
          token: tokenLabel(token, params.tokensAsIds),
          logprob: clampLogprob(lp),
          bytes: tokenBytes(token),
          top_logprobs: top,
        }
        const path: Path = { token, logprob: lp, entry, length: (beam.path?.length ?? 0) + 1, prev: beam.path }
        const cum = beam.cum + lp
        if ((token === EOS_TOKEN_ID && !params.ignoreEos) || path.length >= params.maxTokens)
          finished.push({ path, cum })
        else next.push({ parent: beam, path, cum })
      }
    }
    next.sort((a, b) => b.cum - a.cum)
    live = extend(next.slice(0, width))
    if (!(await yieldEvery())) break
  }
  for (const { path, cum } of live) if (path !== null) finished.push({ path, cum })
  return finished
    .map((f) => ({ f, s: score(job, f, params.lengthPenalty) }))
    .sort((a, b) => b.s - a.s)
    .slice(0, width)
    .map(({ f, s }) => ({ ...materialise(beamJob, f), score: s }))
}
