import { CORPUS, PROSE } from '#shared/engine/corpus'
import { encode, VOCAB_SIZE } from '#shared/engine/tokenizer'

/**
 * The reference language model: an interpolated (Witten–Bell) token n-gram estimated from the shipped corpus and,
 * per request, from the prompt. Its next-token distribution is a real probability distribution over the whole
 * vocabulary, so every sampling parameter and every logprob acts on genuine model output.
 */

/** Longest context (tokens) plus one. */
export const NGRAM_ORDER = 7

type Counts = { total: number; next: Map<number, number> }
type Table = Map<string, Counts>[]

function emptyTable(): Table {
  return Array.from({ length: NGRAM_ORDER }, () => new Map<string, Counts>())
}

function keyOf(tokens: readonly number[], end: number, length: number): string {
  let key = ''
  for (let i = end - length; i < end; i++) key += String.fromCharCode(tokens[i] as number)
  return key
}

function addSequence(table: Table, tokens: readonly number[], weight: number): void {
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as number
    for (let k = 0; k < NGRAM_ORDER && k <= i; k++) {
      const key = keyOf(tokens, i, k)
      const level = table[k] as Map<string, Counts>
      let counts = level.get(key)
      if (!counts) {
        counts = { total: 0, next: new Map() }
        level.set(key, counts)
      }
      counts.total += weight
      counts.next.set(token, (counts.next.get(token) ?? 0) + weight)
    }
  }
}

/** The training text: every corpus exchange in ChatML, reasoning inside `<think>` (an empty pair when there is none). */
export function corpusText(): string {
  const turns = CORPUS.map(
    (x) =>
      `<|im_start|>user\n${x.user}<|im_end|>\n<|im_start|>assistant\n${x.reasoning ? `<think>\n${x.reasoning}\n</think>\n\n` : '<think></think>\n\n'}${x.answer}<|im_end|>\n`,
  )
  return `${turns.join('')}${PROSE}`
}

let shared: Table | undefined

function corpusTable(): Table {
  if (!shared) {
    shared = emptyTable()
    addSequence(shared, encode(corpusText()), 1)
  }
  return shared
}

/** Options of `NgramModel`. */
export type NgramOptions = {
  /** Tokens (usually the prompt) that also train this instance, so answers can reuse the prompt's words. */
  context?: readonly number[]
  /** Weight of the context counts relative to the corpus. */
  contextWeight?: number
}

/** One model instance: the shared corpus counts plus optional per-request context counts. */
export class NgramModel {
  private readonly base = corpusTable()
  private readonly extra: Table | undefined

  constructor(options: NgramOptions = {}) {
    if (options.context && options.context.length > 0) {
      this.extra = emptyTable()
      addSequence(this.extra, options.context, options.contextWeight ?? 0.5)
    }
  }

  /** Next-token probabilities after `history` (the whole sequence so far). */
  probabilities(history: readonly number[]): Float64Array {
    const p = new Float64Array(VOCAB_SIZE).fill(1 / VOCAB_SIZE)
    for (let k = 0; k < NGRAM_ORDER && k <= history.length; k++) {
      const key = keyOf(history, history.length, k)
      const a = this.base[k]?.get(key)
      const b = this.extra?.[k]?.get(key)
      if (!a && !b) break
      const total = (a?.total ?? 0) + (b?.total ?? 0)
      let distinct = a?.next.size ?? 0
      if (b) for (const t of b.next.keys()) if (!a?.next.has(t)) distinct++
      const lambda = total / (total + distinct)
      for (let t = 0; t < VOCAB_SIZE; t++) p[t] = (p[t] as number) * (1 - lambda)
      const scale = lambda / total
      if (a) for (const [t, c] of a.next) p[t] = (p[t] as number) + c * scale
      if (b) for (const [t, c] of b.next) p[t] = (p[t] as number) + c * scale
    }
    return p
  }

  /** Next-token log-probabilities after `history`: the logits every sampler step starts from. */
  logits(history: readonly number[]): Float64Array {
    const p = this.probabilities(history)
    const out = new Float64Array(VOCAB_SIZE)
    for (let t = 0; t < VOCAB_SIZE; t++) out[t] = Math.log(p[t] as number)
    return out
  }
}
