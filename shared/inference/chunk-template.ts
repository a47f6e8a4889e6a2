import type { ChunkJson, RewrittenChunk } from '#shared/inference/chunk-json'
import type { ChatCompletionChunk, ChatUsage } from '#shared/schemas/chat-completion'

// The chunks vLLM sends after the stream's prefix (`{"id":…,"model":…,"choices":`): one choice's content delta for
// most tokens, the same with its finish reason for the last one, and the final usage chunk with no choices; each then
// `}` or its usage and `}`.
const CONTENT_HEAD = '[{"index":0,"delta":{"content":"'
const CONTENT_TAIL = '"},"logprobs":null,"finish_reason":null}]'
const FINISH_HEAD = '"},"logprobs":null,"finish_reason":"'
const FINISH_TAIL = '","stop_reason":null}]'
const NO_CHOICES = '[]'
const USAGE_KEY = ',"usage":'
const BACKSLASH = 0x5c

// The `usage` member that ends a chunk, from `at` (`,"usage":<value>}`): its value, or undefined.
function usageTail(text: string, at: number): { value: unknown } | undefined {
  if (text.slice(at, at + USAGE_KEY.length) !== USAGE_KEY || text.charCodeAt(text.length - 1) !== 0x7d) return undefined
  try {
    // One JSON value between the key and the closing brace, or this throws.
    return { value: JSON.parse(text.slice(at + USAGE_KEY.length, text.length - 1)) }
  } catch {
    return undefined
  }
}

// The index of the quote closing the JSON string whose content starts at `at`, or -1.
function closingQuote(text: string, at: number): number {
  let i = at - 1
  for (;;) {
    i = text.indexOf('"', i + 1)
    if (i < 0) return -1
    let slashes = 0
    while (text.charCodeAt(i - 1 - slashes) === BACKSLASH) slashes++
    if (slashes % 2 === 0) return i
  }
}

// Whether `raw` can stand for itself as a JSON string's content: no escapes, no control characters (which a JSON
// string cannot hold: parsing decides what such a chunk is).
function isPlain(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i)
    if (code < 0x20 || code === BACKSLASH) return false
  }
  return true
}

/** A chunk built from its text: the chunk parsing would give and its JSON for framing. */
export type TemplateChunk = { chunk: ChatCompletionChunk; json: ChunkJson }

/**
 * The chunks of one stream that have vLLM's usual layout, taken without parsing them. Every chunk of a vLLM stream
 * starts with the same members (`id`, `object`, `created`, `model`, as the first chunk framed from its text showed,
 * `learn`), and all but the first are one choice's content delta (the last with its finish reason) or the final usage
 * chunk: such a chunk (`usualChunk`) is recognised by its exact text and built from it, equal to what parsing it would
 * give, with its JSON for framing. Anything else is parsed as usual.
 */
export class ChunkTemplate {
  #prefix: string | undefined
  // The prefix and what follows it, compared in one go (slicing and comparing beats startsWith in V8).
  #head = ''
  #emptyHead = ''
  #ours = ''
  // The chunk's members before `choices`, then `choices`, and `usage` in the second (made when first needed): copying
  // one of these and setting its values is much cheaper in V8 than adding a property to a copy.
  #base: Record<string, unknown> = {}
  #baseWithUsage: Record<string, unknown> | undefined

  constructor(
    private readonly id: string,
    private readonly model: string,
  ) {}

  /** Takes the stream's prefix from a chunk that `rewriteChunkJson` framed from its text. */
  learn(text: string, json: RewrittenChunk): void {
    if (
      this.#prefix !== undefined ||
      json.choicesAt < 0 ||
      (json.usageStart >= 0 && json.usageStart < json.choicesAtOut)
    ) {
      return
    }
    const prefix = text.slice(0, json.choicesAt)
    // The members before `choices` exactly as parsing a chunk that starts with them gives them (duplicates included).
    const base = JSON.parse(`${prefix}null}`) as Record<string, unknown>
    for (const value of Object.values(base)) if (typeof value === 'object' && value !== null) return
    base.id = this.id
    base.model = this.model
    this.#prefix = prefix
    this.#head = prefix + CONTENT_HEAD
    this.#emptyHead = prefix + NO_CHOICES
    this.#ours = json.text.slice(0, json.choicesAtOut)
    this.#base = base
  }

  /** A content, finish or usage chunk with the stream's prefix, built from its text, or undefined (parse it). */
  usualChunk(text: string): TemplateChunk | undefined {
    if (this.#prefix === undefined) return
    const start = this.#head.length
    if (text.slice(0, start) === this.#head) return this.#delta(text, start)
    const empty = this.#emptyHead.length
    if (text.slice(0, empty) === this.#emptyHead) return this.#ending(text, empty, [], true)
    return
  }

  // A content delta whose string starts at `start`, with or without its finish reason.
  #delta(text: string, start: number): TemplateChunk | undefined {
    const end = closingQuote(text, start)
    if (end < 0) return
    const raw = text.slice(start, end)
    let content: string
    if (isPlain(raw)) {
      content = raw
    } else {
      try {
        content = JSON.parse(text.slice(start - 1, end + 1)) as string
      } catch {
        return
      }
    }
    if (text.slice(end, end + CONTENT_TAIL.length) === CONTENT_TAIL) {
      const choices = [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]
      return this.#ending(text, end + CONTENT_TAIL.length, choices, false)
    }
    // The last delta: its finish reason (a plain string: anything else is parsed) and vLLM's `stop_reason`, here null
    // (a stop string or token id is parsed).
    if (text.slice(end, end + FINISH_HEAD.length) !== FINISH_HEAD) return
    const reasonStart = end + FINISH_HEAD.length
    const reasonEnd = text.indexOf('"', reasonStart)
    if (reasonEnd < 0) return
    const reason = text.slice(reasonStart, reasonEnd)
    if (!isPlain(reason) || text.slice(reasonEnd, reasonEnd + FINISH_TAIL.length) !== FINISH_TAIL) return
    const choices = [{ index: 0, delta: { content }, logprobs: null, finish_reason: reason, stop_reason: null }]
    return this.#ending(text, reasonEnd + FINISH_TAIL.length, choices, false)
  }

  // The chunk whose `choices` end at `rest`: then `}`, or its usage and `}` (required when `usageRequired`).
  #ending(text: string, rest: number, choices: unknown[], usageRequired: boolean): TemplateChunk | undefined {
    const prefix = this.#prefix as string
    let usage: { value: unknown } | undefined
    let usageStart = -1
    if (usageRequired || rest !== text.length - 1 || text.charCodeAt(rest) !== 0x7d) {
      usage = usageTail(text, rest)
      if (usage === undefined) return
      usageStart = rest
    }
    const chunk = (usage === undefined ? { ...this.#base } : { ...this.#withUsage(prefix) }) as ChatCompletionChunk
    chunk.choices = choices as ChatCompletionChunk['choices']
    if (usage !== undefined) chunk.usage = usage.value as ChatUsage | null
    const shift = this.#ours.length - prefix.length
    const json = {
      text: this.#ours + text.slice(prefix.length),
      usageStart: usageStart < 0 ? -1 : usageStart + shift,
      usageEnd: usageStart < 0 ? -1 : text.length - 1 + shift,
    }
    return { chunk, json }
  }

  #withUsage(prefix: string): Record<string, unknown> {
    if (this.#baseWithUsage === undefined) {
      const withUsage = JSON.parse(`${prefix}null,"usage":null}`) as Record<string, unknown>
      withUsage.id = this.id
      withUsage.model = this.model
      this.#baseWithUsage = withUsage
    }
    return this.#baseWithUsage
  }
}
