import type { ChatCompletionChunk, ChatUsage } from '#shared/schemas/chat-completion'

// An upstream chunk's JSON text reused as the event the client gets (docs/inference.md §6): the gateway changes only
// the chunk's `id` and `model` and, when the client did not ask for continuous usage stats, drops its `usage`; every
// other byte may go out as the upstream wrote it. Rewriting those spans of the text costs a scan of the top level
// instead of serialising the whole chunk again. Anything unusual (whitespace that is a line break, escaped or repeated
// key names, a key missing) gives no text, and the chunk is serialised as before.

/** A chunk's JSON as it goes out, with the span of its top-level `usage` member (comma included), -1 when none. */
export type ChunkJson = { text: string; usageStart: number; usageEnd: number }

/** `rewriteChunkJson`'s answer: also where the `choices` value starts, in the upstream's text and in ours (-1: none). */
export type RewrittenChunk = ChunkJson & { choicesAt: number; choicesAtOut: number }

const QUOTE = 0x22
const BACKSLASH = 0x5c

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d
}

function skipSpace(text: string, at: number): number {
  let i = at
  while (i < text.length && isSpace(text.charCodeAt(i))) i++
  return i
}

// `at` is an opening quote; the index after the closing one, or -1.
function skipString(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === BACKSLASH) i++
    else if (code === QUOTE) return i + 1
  }
  return -1
}

// `at` is the opening quote of a key; the index after its closing quote, or -1 for a key written with escapes (which
// could spell `id` or `model` unrecognised).
function skipKey(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === BACKSLASH) return -1
    if (code === QUOTE) return i + 1
  }
  return -1
}

// The index after the JSON value starting at `at`, or -1. The text is known to parse, so brackets only need counting.
function skipValue(text: string, at: number): number {
  const first = text.charCodeAt(at)
  if (first === QUOTE) return skipString(text, at)
  if (first === 0x7b || first === 0x5b) {
    let depth = 0
    for (let i = at; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code === QUOTE) {
        const end = skipString(text, i)
        if (end < 0) return -1
        i = end - 1
      } else if (code === 0x7b || code === 0x5b) {
        depth++
      } else if (code === 0x7d || code === 0x5d) {
        depth--
        if (depth === 0) return i + 1
      }
    }
    return -1
  }
  let i = at
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (code === 0x2c || code === 0x7d || code === 0x5d || isSpace(code)) break
    i++
  }
  return i === at ? -1 : i
}

// Whether the key quoted at text[start, end) is `name` (V8's startsWith compares slowly; a key is a few characters).
function keyIs(text: string, start: number, end: number, name: string): boolean {
  if (end - start !== name.length + 2) return false
  for (let i = 0; i < name.length; i++) if (text.charCodeAt(start + 1 + i) !== name.charCodeAt(i)) return false
  return true
}

/**
 * `text` (an upstream chunk that JSON.parse accepted) with the values of its top-level `id` and `model` replaced by
 * `idJson` and `modelJson` (JSON texts), and where its `usage` member then lies; undefined when the text cannot be
 * reused as is: not an object, a line break anywhere (an SSE `data:` line cannot hold one), a key written with
 * escapes, `id` or `model` missing or repeated, `usage` repeated or first.
 */
export function rewriteChunkJson(text: string, idJson: string, modelJson: string): RewrittenChunk | undefined {
  if (text.includes('\n') || text.includes('\r')) return undefined
  let i = skipSpace(text, 0)
  if (text.charCodeAt(i) !== 0x7b) return undefined
  let out = ''
  let copied = 0
  let idSeen = false
  let modelSeen = false
  let usageStart = -1
  let usageEnd = -1
  let choicesAt = -1
  let choicesAtOut = -1
  // End of the previous member's value (or just after `{`): a dropped `usage` takes the text from there.
  let previousEnd = -1
  i = skipSpace(text, i + 1)
  if (text.charCodeAt(i) === 0x7d) return undefined
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined
    const keyStart = i
    const keyEnd = skipKey(text, i)
    if (keyEnd < 0) return undefined
    i = skipSpace(text, keyEnd)
    if (text.charCodeAt(i) !== 0x3a) return undefined
    const valueStart = skipSpace(text, i + 1)
    const valueEnd = skipValue(text, valueStart)
    if (valueEnd < 0) return undefined
    let replacement: string | undefined
    if (keyIs(text, keyStart, keyEnd, 'id')) {
      if (idSeen) return undefined
      idSeen = true
      replacement = idJson
    } else if (keyIs(text, keyStart, keyEnd, 'model')) {
      if (modelSeen) return undefined
      modelSeen = true
      replacement = modelJson
    } else if (keyIs(text, keyStart, keyEnd, 'usage')) {
      if (usageStart >= 0 || previousEnd < 0) return undefined
      // Positions in `out` once the text up to here is copied.
      const shift = out.length - copied
      usageStart = previousEnd + shift
      usageEnd = valueEnd + shift
    } else if (keyIs(text, keyStart, keyEnd, 'choices') && choicesAt < 0) {
      choicesAt = valueStart
      choicesAtOut = valueStart + out.length - copied
    }
    if (replacement !== undefined) {
      out += text.slice(copied, valueStart) + replacement
      copied = valueEnd
    }
    previousEnd = valueEnd
    i = skipSpace(text, valueEnd)
    const code = text.charCodeAt(i)
    if (code === 0x2c) {
      i = skipSpace(text, i + 1)
      continue
    }
    // The closing brace ends the text (framing may insert a member before it).
    if (code !== 0x7d || i !== text.length - 1) return undefined
    break
  }
  if (!idSeen || !modelSeen) return undefined
  return { text: out + text.slice(copied), usageStart, usageEnd, choicesAt, choicesAtOut }
}

// The content chunk vLLM sends for most tokens, after the stream's prefix (`{"id":…,"model":…,"choices":`), then `}`
// or its continuous usage stats and `}`.
const CONTENT_HEAD = '[{"index":0,"delta":{"content":"'
const CONTENT_TAIL = '"},"logprobs":null,"finish_reason":null}]'
const USAGE_KEY = ',"usage":'

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

/**
 * The chunks of one stream that have vLLM's usual layout, taken without parsing them. Every chunk of a vLLM stream
 * starts with the same members (`id`, `object`, `created`, `model`, as the first chunk framed from its text showed,
 * `learn`), and most are one choice's content delta: such a chunk (`contentChunk`) is recognised by its exact text and
 * built from it, equal to what parsing it would give, with its JSON for framing. Anything else is parsed as usual.
 */
export class ChunkTemplate {
  #prefix: string | undefined
  // The prefix and the content delta's opening, compared in one go (slicing and comparing beats startsWith in V8).
  #head = ''
  #ours = ''
  // The chunk's members before `choices`, then `choices`, and `usage` in the second: copying one of these and setting
  // its values is much cheaper in V8 than adding a property to a copy.
  #base: Record<string, unknown> = {}
  #baseWithUsage: Record<string, unknown> = {}

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
    const withUsage = JSON.parse(`${prefix}null,"usage":null}`) as Record<string, unknown>
    withUsage.id = this.id
    withUsage.model = this.model
    this.#baseWithUsage = withUsage
    this.#prefix = prefix
    this.#head = prefix + CONTENT_HEAD
    this.#ours = json.text.slice(0, json.choicesAtOut)
    this.#base = base
  }

  /** A content chunk with the stream's prefix, built from its text, or undefined (parse it). */
  contentChunk(text: string): { chunk: ChatCompletionChunk; json: ChunkJson } | undefined {
    const prefix = this.#prefix
    const start = this.#head.length
    if (prefix === undefined || text.slice(0, start) !== this.#head) return
    const end = closingQuote(text, start)
    if (end < 0 || text.slice(end, end + CONTENT_TAIL.length) !== CONTENT_TAIL) return
    const raw = text.slice(start, end)
    let content: string
    if (raw.includes('\\')) {
      try {
        content = JSON.parse(text.slice(start - 1, end + 1)) as string
      } catch {
        return
      }
    } else {
      // Control characters are not allowed in a JSON string: parsing decides what such a chunk is.
      for (let i = 0; i < raw.length; i++) if (raw.charCodeAt(i) < 0x20) return
      content = raw
    }
    const rest = end + CONTENT_TAIL.length
    let usage: { value: unknown } | undefined
    let usageStart = -1
    if (rest !== text.length - 1 || text.charCodeAt(rest) !== 0x7d) {
      usage = usageTail(text, rest)
      if (usage === undefined) return
      usageStart = rest
    }
    const chunk = (usage === undefined ? { ...this.#base } : { ...this.#baseWithUsage }) as ChatCompletionChunk
    chunk.choices = [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]
    if (usage !== undefined) chunk.usage = usage.value as ChatUsage | null
    const shift = this.#ours.length - prefix.length
    const json = {
      text: this.#ours + text.slice(prefix.length),
      usageStart: usageStart < 0 ? -1 : usageStart + shift,
      usageEnd: usageStart < 0 ? -1 : text.length - 1 + shift,
    }
    return { chunk, json }
  }
}
