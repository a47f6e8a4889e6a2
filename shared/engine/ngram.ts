import { CORPUS, type CorpusExchange, PROSE } from '#shared/engine/corpus'
import { Detokenizer, encode, VOCAB_SIZE } from '#shared/engine/tokenizer'

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

// Counts `tokens[i]` after each of its contexts (0 to NGRAM_ORDER - 1 tokens before it).
function addToken(table: Table, tokens: readonly number[], i: number, weight: number): void {
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

function addSequence(table: Table, tokens: readonly number[], weight: number): void {
  for (let i = 0; i < tokens.length; i++) addToken(table, tokens, i, weight)
}

function exchangeText(x: CorpusExchange): string {
  const think = x.reasoning ? `<think>\n${x.reasoning}\n</think>\n\n` : '<think></think>\n\n'
  return `<|im_start|>user\n${x.user}<|im_end|>\n<|im_start|>assistant\n${think}${x.answer}<|im_end|>\n`
}

/** The training text: every corpus exchange in ChatML, reasoning inside `<think>` (an empty pair when there is none). */
export function corpusText(): string {
  return `${CORPUS.map(exchangeText).join('')}${PROSE}`
}

type Topic = { words: Set<string>; table: Table }

let shared: Table | undefined
let topics: Topic[] | undefined

function corpusTable(): Table {
  if (!shared) {
    shared = emptyTable()
    addSequence(shared, encode(corpusText()), 1)
  }
  return shared
}

function corpusTopics(): Topic[] {
  topics ??= CORPUS.map((x) => {
    const table = emptyTable()
    addSequence(table, encode(exchangeText(x)), 1)
    return { words: words(`${x.user} ${x.reasoning ?? ''} ${x.answer}`), table }
  })
  return topics
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z]{3,}/g) ?? [])
}

// The exchange that shares the most words with the question (`overlap(i)` words with exchange i): its counts are
// boosted so answers follow the topic.
function pickTopic(overlap: (index: number) => number): Table | undefined {
  const all = corpusTopics()
  let best: Table | undefined
  let bestScore = 0
  for (const [i, topic] of all.entries()) {
    const score = overlap(i) / Math.sqrt(topic.words.size)
    if (score > bestScore) {
      bestScore = score
      best = topic.table
    }
  }
  return best
}

function topicTable(question: string): Table | undefined {
  const asked = words(question)
  const all = corpusTopics()
  return pickTopic((i) => {
    let overlap = 0
    for (const w of asked) if (all[i]?.words.has(w)) overlap++
    return overlap
  })
}

let vocabulary: { words: Set<string>; longest: number } | undefined

// Every word of every topic: only these can change which topic a question picks.
function topicVocabulary(): { words: Set<string>; longest: number } {
  if (!vocabulary) {
    const all = new Set<string>()
    for (const topic of corpusTopics()) for (const w of topic.words) all.add(w)
    vocabulary = { words: all, longest: Math.max(0, ...[...all].map((w) => w.length)) }
  }
  return vocabulary
}

// A question read a piece at a time: the same words `words` finds in the whole text (maximal runs of at least three
// letters, counted so that a run that grows replaces its shorter self) and the topic they pick.
class QuestionReader {
  private readonly counts = new Map<string, number>()
  private readonly overlap = new Int32Array(corpusTopics().length)
  private run = ''
  private runLength = 0
  private picked: Table | undefined
  private stale = false

  read(text: string): void {
    const { longest } = topicVocabulary()
    // Lower-casing piece by piece equals lower-casing the whole for letters a-z (only final sigma depends on context).
    for (const ch of text.toLowerCase()) {
      if (ch < 'a' || ch > 'z') {
        this.run = ''
        this.runLength = 0
        continue
      }
      const length = ++this.runLength
      // A run longer than every topic word is none of them: it is not spelled out, so a long run costs linear time.
      if (length > longest + 1) continue
      if (length > 3) this.count(this.run, -1)
      if (length > longest) continue
      this.run += ch
      if (length >= 3) this.count(this.run, 1)
    }
  }

  get topic(): Table | undefined {
    if (this.stale) this.picked = pickTopic((i) => this.overlap[i] as number)
    this.stale = false
    return this.picked
  }

  private count(word: string, delta: 1 | -1): void {
    if (!topicVocabulary().words.has(word)) return
    const n = (this.counts.get(word) ?? 0) + delta
    if (n === 0) this.counts.delete(word)
    else this.counts.set(word, n)
    if (n !== 0 && !(n === 1 && delta === 1)) return
    this.stale = true
    for (const [i, topic] of corpusTopics().entries()) {
      if (topic.words.has(word)) this.overlap[i] = (this.overlap[i] as number) + delta
    }
  }
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
    return mix(this.sources, history, end)
  }

  /** Next-token log-probabilities after `history` (or its first `end` tokens): what every sampler step starts from. */
  logits(history: readonly number[], end = history.length): Float64Array {
    return logOf(this.probabilities(history, end))
  }
}

/** Options of `causalLogits`. */
export type CausalOptions = {
  /** Weight of the context counts relative to the corpus, as in `NgramOptions`. */
  contextWeight?: number
  /** Where each user message's text lies in the tokens ([start, end), in order): the topic is read from them. */
  questions?: readonly (readonly [number, number])[]
}

/**
 * The next-token log-probabilities at each position `i` ≥ 1 of `ids` given only the tokens before it (causal, as
 * vLLM's prompt logprobs): exactly what a `NgramModel` for a prompt of `ids[0..i)` gives, its context counts being
 * those tokens and its topic the last user message begun before `i`, as far as it goes. The counts grow by one token
 * per position and the topic's words by one piece, so scoring a prompt costs about as much as generating it.
 */
export function* causalLogits(ids: readonly number[], options: CausalOptions = {}): Generator<Float64Array> {
  const context = emptyTable()
  const sources: Source[] = [
    { table: corpusTable(), scale: 1 },
    { table: context, scale: options.contextWeight ?? 0.5 },
  ]
  const questions = options.questions ?? []
  let next = 0
  let question: { reader: QuestionReader; decoder: Detokenizer; at: number; end: number } | undefined
  for (let end = 1; end < ids.length; end++) {
    addToken(context, ids, end - 1, 1)
    for (; next < questions.length && (questions[next]?.[0] as number) <= end; next++) {
      const [start, stop] = questions[next] as readonly [number, number]
      // The question's text as the prompt spells it, special tokens included (`words` sees their letters too).
      const decoder = new Detokenizer({ skipSpecialTokens: false, spacesBetweenSpecialTokens: false })
      question = { reader: new QuestionReader(), decoder, at: start, end: stop }
    }
    if (question) {
      for (; question.at < Math.min(end, question.end); question.at++) {
        question.reader.read(question.decoder.push(ids[question.at] as number))
      }
    }
    const topic = question?.reader.topic
    sources.length = 2
    if (topic) sources.push({ table: topic, scale: TOPIC_WEIGHT })
    yield logOf(mix(sources, ids, end))
  }
}

// Interpolates the sources' counts from the longest context down (Witten–Bell): next-token probabilities after the
// first `end` tokens of `history`.
function mix(sources: readonly Source[], history: readonly number[], end: number): Float64Array {
  const p = new Float64Array(VOCAB_SIZE).fill(1 / VOCAB_SIZE)
  for (let k = 0; k < NGRAM_ORDER && k <= end; k++) {
    const key = keyOf(history, end, k)
    const found: [Counts, number][] = []
    for (const source of sources) {
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

function logOf(p: Float64Array): Float64Array {
  const out = new Float64Array(VOCAB_SIZE)
  for (let t = 0; t < VOCAB_SIZE; t++) out[t] = Math.log(p[t] as number)
  return out
}
