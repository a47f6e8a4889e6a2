import { VOCAB_SIZE } from '#shared/engine/tokenizer'

/**
 * Logit processing and sampling with vLLM's semantics: masks (`allowed_token_ids`, `bad_words`, `min_tokens`,
 * structured outputs), `logit_bias`, repetition / frequency / presence penalties, then temperature (0 = greedy),
 * `min_p`, `top_k` and `top_p`. The log-softmax of the processed logits is the distribution the token is drawn from.
 * Logprobs do not report it: like vLLM's default `logprobs_mode: raw_logprobs`, they report the model's distribution
 * under the engine's own constraint only (grammar, forced `</think>`; `Sequence` in `sequence.ts` computes both).
 */

/** Sampling parameters after defaults. */
export type SamplingOptions = {
  temperature: number
  topK: number
  topP: number
  minP: number
  presencePenalty: number
  frequencyPenalty: number
  repetitionPenalty: number
  logitBias: ReadonlyMap<number, number>
}

/** Seeded 32-bit generator (sfc32), seeded by hashing the request seed and the choice index. */
export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: string) {
    let h1 = 1779033703
    let h2 = 3144134277
    let h3 = 1013904242
    let h4 = 2773480762
    for (let i = 0; i < seed.length; i++) {
      const k = seed.charCodeAt(i)
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067)
      h2 = h3 ^ Math.imul(h2 ^ k, 2869860233)
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213)
      h4 = h1 ^ Math.imul(h4 ^ k, 2716044179)
    }
    this.a = h1 >>> 0
    this.b = h2 >>> 0
    this.c = h3 >>> 0
    this.d = h4 >>> 0
    for (let i = 0; i < 12; i++) this.next()
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.a |= 0
    this.b |= 0
    this.c |= 0
    this.d |= 0
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return (t >>> 0) / 4294967296
  }
}

/** Applies bias and penalties in place (vLLM: repetition over prompt and output, the others over output only). */
export function applyBiasAndPenalties(
  logits: Float64Array,
  options: SamplingOptions,
  promptTokens: ReadonlySet<number>,
  outputCounts: ReadonlyMap<number, number>,
): void {
  for (const [token, bias] of options.logitBias) logits[token] = (logits[token] as number) + bias
  if (options.repetitionPenalty !== 1) {
    const p = options.repetitionPenalty
    const seen = new Set([...promptTokens, ...outputCounts.keys()])
    for (const t of seen) {
      const v = logits[t] as number
      logits[t] = v > 0 ? v / p : v * p
    }
  }
  if (options.frequencyPenalty === 0 && options.presencePenalty === 0) return
  for (const [t, count] of outputCounts) {
    logits[t] = (logits[t] as number) - options.frequencyPenalty * count - (count > 0 ? options.presencePenalty : 0)
  }
}

/** Log-softmax; all -Infinity stays all -Infinity. */
export function logSoftmax(logits: Float64Array): Float64Array {
  let max = Number.NEGATIVE_INFINITY
  for (const v of logits) if (v > max) max = v
  const out = new Float64Array(logits.length)
  if (max === Number.NEGATIVE_INFINITY) return out.fill(Number.NEGATIVE_INFINITY)
  let sum = 0
  for (const v of logits) sum += Math.exp(v - max)
  const log = max + Math.log(sum)
  for (let i = 0; i < logits.length; i++) out[i] = (logits[i] as number) - log
  return out
}

/**
 * Turns processed logits into the final sampling distribution (log-probabilities): temperature, then min_p, top_k,
 * top_p. Greedy (temperature 0) keeps the logits' own softmax, whose argmax is the greedy choice.
 */
export function finalDistribution(logits: Float64Array, options: SamplingOptions): Float64Array {
  if (options.temperature === 0) return logSoftmax(logits)
  const scaled = new Float64Array(VOCAB_SIZE)
  for (let t = 0; t < VOCAB_SIZE; t++) scaled[t] = (logits[t] as number) / options.temperature
  let lp = logSoftmax(scaled)
  let changed = false
  if (options.minP > 0) {
    let top = Number.NEGATIVE_INFINITY
    for (const v of lp) if (v > top) top = v
    const floor = top + Math.log(options.minP)
    for (let t = 0; t < VOCAB_SIZE; t++) {
      if ((lp[t] as number) < floor) {
        scaled[t] = Number.NEGATIVE_INFINITY
        changed = true
      }
    }
  }
  if (options.topK > 0 || options.topP < 1) {
    const order = Array.from({ length: VOCAB_SIZE }, (_, i) => i).sort(
      (x, y) => (scaled[y] as number) - (scaled[x] as number),
    )
    if (options.topK > 0) {
      for (const t of order.slice(options.topK)) scaled[t] = Number.NEGATIVE_INFINITY
      changed = true
    }
    if (options.topP < 1) {
      const probs = logSoftmax(scaled)
      let cum = 0
      for (let i = 0; i < order.length; i++) {
        const t = order[i] as number
        // Keep the smallest prefix whose mass reaches top_p (always at least the top token).
        if (i > 0 && cum >= options.topP) scaled[t] = Number.NEGATIVE_INFINITY
        cum += Math.exp(probs[t] as number)
      }
      changed = true
    }
  }
  if (changed) lp = logSoftmax(scaled)
  return lp
}

/** The argmax (lowest id on ties), or -1 when everything is masked. */
export function argmax(values: Float64Array): number {
  let best = -1
  let bestValue = Number.NEGATIVE_INFINITY
  for (let t = 0; t < values.length; t++) {
    if ((values[t] as number) > bestValue) {
      best = t
      bestValue = values[t] as number
    }
  }
  return best
}

/** Draws a token from log-probabilities. */
export function sample(logprobs: Float64Array, rng: Rng): number {
  let r = rng.next()
  let last = -1
  for (let t = 0; t < logprobs.length; t++) {
    const p = Math.exp(logprobs[t] as number)
    if (p === 0) continue
    last = t
    r -= p
    if (r < 0) return t
  }
  return last
}

/** The `k` most likely tokens with their log-probabilities, best first. */
export function topTokens(logprobs: Float64Array, k: number): [number, number][] {
  const order = Array.from({ length: logprobs.length }, (_, i) => i)
  order.sort((x, y) => (logprobs[y] as number) - (logprobs[x] as number) || x - y)
  return order.slice(0, k).map((t) => [t, logprobs[t] as number])
}

/** The 1-based rank of a token in a distribution (vLLM's `rank`). */
export function rankOf(logprobs: Float64Array, token: number): number {
  const v = logprobs[token] as number
  let rank = 1
  for (let t = 0; t < logprobs.length; t++) if ((logprobs[t] as number) > v) rank++
  return rank
}
