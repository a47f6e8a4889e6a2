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
