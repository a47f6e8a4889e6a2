import type { Matcher, MatchState } from '#shared/engine/grammar/matcher'
import { clampLogprob, type LogprobEntry, sampledFirst, tokenLabel, topEntry } from '#shared/engine/logprob-entry'
import type { NgramModel } from '#shared/engine/ngram'
import { type EngineParams, REASONING_BUDGET } from '#shared/engine/params'
import { isRepetitive } from '#shared/engine/repetition'
import { applyBiasAndPenalties, argmax, finalDistribution, logSoftmax, type Rng, sample } from '#shared/engine/sampler'
import { heldFrom, matchStop, stopHoldBack } from '#shared/engine/stop-strings'
import { grammarMask, only, requestMask } from '#shared/engine/token-mask'
import { Detokenizer, EOS_TOKEN_ID, isSpecial, TOKEN, tokenBytes, VOCAB_SIZE } from '#shared/engine/tokenizer'

/** What one request shares between its choices. */
export type Job = {
  model: NgramModel
  params: EngineParams
  prompt: readonly number[]
  promptSet: ReadonlySet<number>
  matcher: Matcher | undefined
  reasoningOpen: boolean
}

/** What one decoding step produced. */
export type StepResult = { token: number; content: string; reasoning: string; logprobs: LogprobEntry | undefined }

const NEG_INF = Number.NEGATIVE_INFINITY

/**
 * One choice being generated: the token history, the grammar state, the reasoning section, decoded text with stop
 * strings held back while they might still match, and the finish reason once it ends.
 */
export class Sequence {
  readonly output: number[]
  readonly history: number[]
  content = ''
  reasoning = ''
  cumulativeLogprob = 0
  finishReason: 'stop' | 'length' | 'repetition' | undefined
  stopReason: string | number | null = null
  private released = 0
  private reasoningTokens = 0
  private inReasoning: boolean
  private grammar: MatchState | undefined
  private readonly counts: Map<number, number>
  private readonly contentText: Detokenizer
  private readonly reasoningText: Detokenizer
  private readonly holdBack: number

  /** A new choice of `job`, or with `from` a copy of that sequence (see `fork`). */
  constructor(
    private readonly job: Job,
    private readonly rng: Rng,
    from?: Sequence,
  ) {
    this.output = [...(from?.output ?? [])]
    this.history = [...(from?.history ?? job.prompt)]
    this.counts = new Map(from?.counts)
    this.inReasoning = from?.inReasoning ?? job.reasoningOpen
    this.grammar = from ? from.grammar : job.matcher?.initial
    const options = {
      skipSpecialTokens: job.params.skipSpecialTokens,
      spacesBetweenSpecialTokens: job.params.spacesBetweenSpecialTokens,
    }
    this.contentText = from?.contentText.fork() ?? new Detokenizer(options)
    this.reasoningText = from?.reasoningText.fork() ?? new Detokenizer(options)
    this.holdBack = stopHoldBack(job.params.stop, job.params.includeStopStr)
    if (from) {
      this.content = from.content
      this.reasoning = from.reasoning
      this.cumulativeLogprob = from.cumulativeLogprob
      this.finishReason = from.finishReason
      this.stopReason = from.stopReason
      this.released = from.released
      this.reasoningTokens = from.reasoningTokens
    }
  }

  /**
   * A copy that goes on independently from here, sharing the generator (beam search extends a beam by several
   * tokens; it decodes greedily, so the shared generator draws nothing).
   */
  fork(): Sequence {
    return new Sequence(this.job, this.rng, this)
  }

  /** Reasoning tokens generated so far. */
  get reasoningTokenCount(): number {
    return this.reasoningTokens
  }

  get finished(): boolean {
    return this.finishReason !== undefined
  }

  /**
   * The engine's own constraint on the next token (undefined: none): the reasoning budget's forced `</think>` and the
   * grammar. Like vLLM's structured-output bitmask, it applies to the logits before anything else, so raw logprobs
   * see it.
   */
  private constraint(): Uint8Array | undefined {
    const { params, matcher } = this.job
    const remaining = params.maxTokens - this.output.length
    if (this.inReasoning) {
      // Leave room for `</think>` and, under a constraint, for the shortest valid answer.
      const reserve = 1 + (matcher ? matcher.initial.dist + 1 : 0)
      const budget = params.reasoningBudget ?? REASONING_BUDGET.medium
      if (this.reasoningTokens >= budget || remaining <= reserve) return only(TOKEN.thinkEnd)
      return undefined
    }
    const held = this.output.length < params.minTokens
    return matcher && this.grammar ? grammarMask(matcher, this.grammar, remaining, held) : undefined
  }

  /** The distribution the next token is drawn from (log-probabilities). */
  distribution(): Float64Array {
    return this.distributions(false).sampled
  }

  /**
   * The sampling distribution and, when asked, the raw one: the model's log-softmax under the engine's constraint
   * only, before the request's masks, bias, penalties, temperature and top-k/top-p/min-p (vLLM's default
   * `logprobs_mode: raw_logprobs`).
   */
  private distributions(wantRaw: boolean): { sampled: Float64Array; raw: Float64Array | undefined } {
    const logits = this.job.model.logits(this.history)
    const constraint = this.constraint()
    if (constraint) for (let t = 0; t < VOCAB_SIZE; t++) if (constraint[t] === 0) logits[t] = NEG_INF
    const raw = wantRaw ? logSoftmax(logits) : undefined
    const { params, matcher } = this.job
    const mask = requestMask(params, this.output, matcher !== undefined && !this.inReasoning, constraint)
    if (mask && mask !== constraint) for (let t = 0; t < VOCAB_SIZE; t++) if (mask[t] === 0) logits[t] = NEG_INF
    applyBiasAndPenalties(logits, params.sampling, this.job.promptSet, this.counts)
    return { sampled: finalDistribution(logits, params.sampling), raw }
  }

  /** Samples (or picks greedily) the next token, appends it and applies the stop rules. */
  step(): StepResult {
    const { params } = this.job
    const { sampled: dist, raw } = this.distributions(params.logprobs)
    const token = params.sampling.temperature === 0 ? argmax(dist) : sample(dist, this.rng)
    if (token < 0) throw new Error('every token was masked')
    let logprobs: LogprobEntry | undefined
    if (raw) {
      logprobs = {
        token: tokenLabel(token, params.tokensAsIds),
        logprob: clampLogprob(raw[token] as number),
        bytes: tokenBytes(token),
        top_logprobs: sampledFirst(raw, token, params.topLogprobs).map(([t, lp]) =>
          topEntry(t, lp, params.tokensAsIds),
        ),
      }
    }
    return { ...this.append(token, dist[token] as number), logprobs }
  }

  /** Appends a chosen token (also used by beam search) and returns the text it releases. */
  append(token: number, logprob: number): { token: number; content: string; reasoning: string } {
    const { params } = this.job
    this.output.push(token)
    this.history.push(token)
    this.cumulativeLogprob += logprob
    this.counts.set(token, (this.counts.get(token) ?? 0) + 1)
    const count = this.output.length
    const before = this.content.length
    const stopToken =
      count >= params.minTokens &&
      ((token === EOS_TOKEN_ID && !params.ignoreEos) || params.stopTokenIds.includes(token))
    const grammarDone = this.grammar !== undefined && !this.inReasoning && token === EOS_TOKEN_ID
    let reasoning = ''
    if (this.inReasoning) {
      if (token === TOKEN.thinkEnd) {
        this.inReasoning = false
        reasoning = this.reasoningText.flush()
      } else {
        this.reasoningTokens++
        if (!stopToken || params.includeStopStr) reasoning = this.reasoningText.push(token)
      }
    } else {
      if (this.grammar && !isSpecial(token)) this.grammar = this.job.matcher?.advance(this.grammar, token) ?? undefined
      if ((!stopToken && !grammarDone) || params.includeStopStr) this.content += this.contentText.push(token)
    }
    this.reasoning += reasoning
    if (stopToken || grammarDone) {
      this.finishReason = 'stop'
      // vLLM checks EOS before `stop_token_ids`, so EOS reports no stop reason even when listed.
      this.stopReason = grammarDone || (token === EOS_TOKEN_ID && !params.ignoreEos) ? null : token
    } else if (params.stop.length > 0 && count > params.minTokens && this.matchStop(before)) {
      this.finishReason = 'stop'
    } else if (count >= params.maxTokens) {
      this.finishReason = 'length'
    } else if (params.repetition && isRepetitive(this.output, params.repetition)) {
      this.finishReason = 'repetition'
      this.stopReason = 'repetition_detected'
    }
    if (this.finished) {
      this.content += this.contentText.flush()
      const rest = this.reasoningText.flush()
      this.reasoning += rest
      reasoning += rest
    }
    return { token, content: this.release(), reasoning }
  }

  /**
   * Ends the sequence at EOS without decoding it, as vLLM's beam search ends a beam: `keep` (its
   * `include_stop_str_in_output`) adds the token to the output, never to the text.
   */
  stopAtEos(keep: boolean, logprob: number): void {
    if (keep) {
      this.output.push(EOS_TOKEN_ID)
      this.history.push(EOS_TOKEN_ID)
    }
    this.cumulativeLogprob += logprob
    this.finishReason = 'stop'
    this.stopReason = EOS_TOKEN_ID
    this.content += this.contentText.flush()
    this.reasoning += this.reasoningText.flush()
  }

  // Cuts the text at the first stop string (stop-strings.ts) the latest token completed.
  private matchStop(before: number): boolean {
    const match = matchStop(this.content, before, this.job.params.stop, this.job.params.includeStopStr)
    if (match === undefined) return false
    this.content = match.content
    this.stopReason = match.stop
    return true
  }

  private release(): string {
    const upTo = this.finished ? this.content.length : Math.max(this.released, heldFrom(this.content, this.holdBack))
    const text = this.content.slice(this.released, upTo)
    this.released = upTo
    return text
  }
}
