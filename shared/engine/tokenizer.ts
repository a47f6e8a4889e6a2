/**
 * The reference engine's byte-level tokenizer: ids 0–255 are the UTF-8 bytes, followed by a fixed list of special
 * tokens (bos, eos, chat-role markers, reasoning markers). Ids never change between releases, so logit biases,
 * `allowed_token_ids` and `stop_token_ids` written against it stay valid.
 */

/** Special tokens in id order, starting at 256. */
export const SPECIAL_TOKENS = [
  '<|begin_of_text|>',
  '<|end_of_text|>',
  '<|im_start|>',
  '<|im_end|>',
  '<think>',
  '</think>',
] as const

/** Well-known token ids. */
export const TOKEN = {
  bos: 256,
  endOfText: 257,
  imStart: 258,
  imEnd: 259,
  thinkStart: 260,
  thinkEnd: 261,
} as const

/** Number of token ids (bytes plus special tokens). */
export const VOCAB_SIZE = 256 + SPECIAL_TOKENS.length

/** The end-of-sequence id of chat generation (ChatML closes a turn with `<|im_end|>`). */
export const EOS_TOKEN_ID = TOKEN.imEnd

const encoder = new TextEncoder()
const SPECIAL_RE = new RegExp(SPECIAL_TOKENS.map((t) => t.replace(/[|<>/]/g, (ch) => `\\${ch}`)).join('|'), 'g')

/** Whether an id is one of the special tokens. */
export function isSpecial(id: number): boolean {
  return id >= 256 && id < VOCAB_SIZE
}

/** Encodes text, mapping special-token strings to their ids (as Hugging Face tokenizers do) and the rest to bytes. */
export function encode(text: string, addSpecialTokens = false): number[] {
  const ids: number[] = addSpecialTokens ? [TOKEN.bos] : []
  let last = 0
  for (const match of text.matchAll(SPECIAL_RE)) {
    for (const byte of encoder.encode(text.slice(last, match.index))) ids.push(byte)
    ids.push(256 + SPECIAL_TOKENS.indexOf(match[0] as (typeof SPECIAL_TOKENS)[number]))
    last = match.index + match[0].length
  }
  for (const byte of encoder.encode(text.slice(last))) ids.push(byte)
  return ids
}

/** The bytes a token stands for (a special token's bytes are its UTF-8 text). */
export function tokenBytes(id: number): number[] {
  if (id < 256) return [id]
  return [...encoder.encode(SPECIAL_TOKENS[id - 256] ?? '')]
}

/** A token decoded on its own, as vLLM shows it in logprobs (a lone non-ASCII byte reads as U+FFFD). */
export function tokenText(id: number): string {
  if (id >= 256) return SPECIAL_TOKENS[id - 256] ?? ''
  return id < 128 ? String.fromCharCode(id) : '\ufffd'
}

/** Options of `decode`, named as in Hugging Face tokenizers. */
export type DecodeOptions = { skipSpecialTokens?: boolean; spacesBetweenSpecialTokens?: boolean }

/** Decodes ids to text with Hugging Face's special-token rules. */
export function decode(ids: readonly number[], options: DecodeOptions = {}): string {
  const detok = new Detokenizer(options)
  let text = ''
  for (const id of ids) text += detok.push(id)
  return text + detok.flush()
}

/**
 * Incremental decoder for streaming: holds back incomplete UTF-8 sequences and inserts the spaces Hugging Face puts
 * between special tokens and the text around them (`spaces_between_special_tokens`).
 */
export class Detokenizer {
  private readonly skip: boolean
  private readonly spaces: boolean
  private decoder = new TextDecoder('utf-8')
  private segments = 0
  private inText = false
  private pending = 0
  // The bytes of the character being decoded (from its lead byte on), which `fork` replays.
  private held: number[] = []

  constructor(options: DecodeOptions = {}) {
    this.skip = options.skipSpecialTokens ?? true
    this.spaces = options.spacesBetweenSpecialTokens ?? true
  }

  /** Adds one token and returns the text it completes (possibly empty). */
  push(id: number): string {
    if (isSpecial(id)) {
      if (this.skip) return ''
      const pending = this.flush()
      const sep = this.spaces && this.segments > 0 ? ' ' : ''
      this.segments++
      this.inText = false
      return `${pending}${sep}${SPECIAL_TOKENS[id - 256]}`
    }
    let sep = ''
    if (!this.inText) {
      if (this.spaces && this.segments > 0) sep = ' '
      this.segments++
      this.inText = true
    }
    // ASCII outside a multi-byte sequence needs no decoder (the common case, and the decoder call is the slow part).
    if (id < 0x80 && this.pending === 0) return sep + String.fromCharCode(id)
    if (id >= 0xc0) {
      this.pending = id >= 0xf0 ? 3 : id >= 0xe0 ? 2 : 1
      this.held = [id]
    } else if (id >= 0x80 && this.pending > 0) {
      this.pending--
      this.held.push(id)
    } else this.pending = 0
    return sep + this.decoder.decode(new Uint8Array([id]), { stream: true })
  }

  /** An independent copy in the same state (beam search continues one beam several ways). */
  fork(): Detokenizer {
    const copy = new Detokenizer({ skipSpecialTokens: this.skip, spacesBetweenSpecialTokens: this.spaces })
    copy.segments = this.segments
    copy.inText = this.inText
    copy.pending = this.pending
    copy.held = [...this.held]
    // A TextDecoder's partial character cannot be copied out; a fresh one fed the same bytes since the lead byte ends
    // in the same state (a lead byte always starts from a clean state), and what it emits was emitted already.
    if (this.pending > 0) copy.decoder.decode(Uint8Array.from(this.held), { stream: true })
    return copy
  }

  /** Returns whatever incomplete bytes are held (as U+FFFD) and resets the UTF-8 state. */
  flush(): string {
    const rest = this.decoder.decode()
    this.decoder = new TextDecoder('utf-8')
    this.pending = 0
    return rest
  }
}
