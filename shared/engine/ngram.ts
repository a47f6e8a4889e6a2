import { CORPUS, type CorpusExchange, PROSE } from '#shared/engine/corpus'
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

function exchangeText(x: CorpusExchange): string {
  const think = x.reasoning ? `<think>\n${x.reasoning}\n</think>\n\n` : '<think></think>\n\n'
  return `<|im_start|>user\n${x.user}<|im_end|>\n<|im_start|>assistant\n${think}${x.answer}<|im_end|>\n`
}

/** The training text: every corpus exchange in ChatML, reasoning inside `<think>` (an empty pair when there is none). */
export function corpusText(): string {
  return `${CORPUS.map(exchangeText).join('')}${PROSE}`
}

let shared: Table | undefined
let topics: { words: Set<string>; table: Table }[] | undefined

function corpusTable(): Table {
  if (!shared) {
    shared = emptyTable()
    addSequence(shared, encode(corpusText()), 1)
  }
  return shared
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z]{3,}/g) ?? [])
}

// The exchange that shares the most words with the question: its counts are boosted so answers follow the topic.
function topicTable(question: string): Table | undefined {
  topics ??= CORPUS.map((x) => {
    const table = emptyTable()
    addSequence(table, encode(exchangeText(x)), 1)
    return { words: words(`${x.user} ${x.reasoning ?? ''} ${x.answer}`), table }
  })
  const asked = words(question)
  let best: Table | undefined
  let bestScore = 0
  for (const topic of topics) {
    let overlap = 0
    for (const w of asked) if (topic.words.has(w)) overlap++
    const score = overlap / Math.sqrt(topic.words.size)
    if (score > bestScore) {
      bestScore = score
      best = topic.table
    }
  }
  return best
}

/** Options of `NgramModel`. */
export type NgramOptions = {
  /** Tokens (usually the prompt) that also train this instance, so answers can reuse the prompt's words. */
  context?: readonly number[]
  /** Weight of the context counts relative to the corpus. */
  contextWeight?: number
  /** The question being answered: the corpus exchange closest to it is weighted up. */
  topic?: string
}

const TOPIC_WEIGHT = 4
type Source = { table: Table; scale: number }

/** One model instance: the shared corpus counts plus optional per-request context counts. */
export class NgramModel {
  private readonly sources: Source[] = [{ table: corpusTable(), scale: 1 }]

  constructor(options: NgramOptions = {}) {
    if (options.context && options.context.length > 0) {
      const extra = emptyTable()
      addSequence(extra, options.context, 1)
      this.sources.push({ table: extra, scale: options.contextWeight ?? 0.5 })
    }
    const topic = options.topic === undefined ? undefined : topicTable(options.topic)
    if (topic) this.sources.push({ table: topic, scale: TOPIC_WEIGHT })
  }

  /** Next-token probabilities after the first `end` tokens of `history` (default: all of them). */
  probabilities(history: readonly number[], end = history.length): Float64Array {
    const p = new Float64Array(VOCAB_SIZE).fill(1 / VOCAB_SIZE)
    for (let k = 0; k < NGRAM_ORDER && k <= end; k++) {
      const key = keyOf(history, end, k)
      const found: [Counts, number][] = []
      for (const source of this.sources) {
        const counts = source.table[k]?.get(key)
        if (counts) found.push([counts, source.scale])
      }
      if (found.length === 0) break
      let total = 0
      const seen = new Set<number>()
      for (const [counts, scale] of found) {
        total += counts.total * scale
        for (const t of counts.next.keys()) seen.add(t)
      }
      if (total === 0) break
      const lambda = total / (total + seen.size)
      for (let t = 0; t < VOCAB_SIZE; t++) p[t] = (p[t] as number) * (1 - lambda)
      for (const [counts, scale] of found) {
        const weight = (lambda * scale) / total
        for (const [t, c] of counts.next) p[t] = (p[t] as number) + c * weight
      }
    }
    return p
  }

  /** Next-token log-probabilities after `history` (or its first `end` tokens): what every sampler step starts from. */
  logits(history: readonly number[], end = history.length): Float64Array {
    const p = this.probabilities(history, end)
    const out = new Float64Array(VOCAB_SIZE)
    for (let t = 0; t < VOCAB_SIZE; t++) out[t] = Math.log(p[t] as number)
    return out
  }
}
