import {
  alt,
  codePoints,
  EMPTY,
  type GNode,
  lit,
  negateRanges,
  normaliseRanges,
  rep,
  seq,
  UnsupportedConstraintError,
} from '#shared/engine/grammar/ast'

/**
 * A regular-expression parser for structured outputs. Supported: literals, `.`, classes with ranges and negation,
 * `\d \w \s` (and negations), `\n \r \t \f \v \0 \xHH \uHHHH \u{H…}`, groups `(…)` and `(?:…)`, `|`, and the
 * quantifiers `* + ? {n} {n,} {n,m}` (lazy forms match the same language). The whole output must match; `^` and `$`
 * are accepted only at the ends. Back-references, lookaround and word boundaries cannot be enforced byte by byte and
 * are refused.
 */

type Ranges = [number, number][]

const DIGIT: Ranges = [[0x30, 0x39]]
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]
const SPACE: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x2028, 0x2029],
  [0xfeff, 0xfeff],
]

// Characters a JSON string must escape, with the escape the output uses for each.
function jsonEscape(cp: number): string {
  const named: Record<number, string> = { 34: '\\"', 92: '\\\\', 10: '\\n', 13: '\\r', 9: '\\t', 8: '\\b', 12: '\\f' }
  return named[cp] ?? `\\u${cp.toString(16).padStart(4, '0')}`
}

/** Options of `regexToNode`. */
export type RegexOptions = {
  /** Emit the matched characters as the inside of a JSON string (escaping quotes, backslashes and controls). */
  jsonString?: boolean
}

/** Parses a regex into a grammar node matching exactly its language. */
export function regexToNode(source: string, options: RegexOptions = {}): GNode {
  return new RegexParser(source, options.jsonString ?? false).parse()
}

class RegexParser {
  private pos = 0

  constructor(
    private readonly src: string,
    private readonly json: boolean,
  ) {}

  private fail(what: string): never {
    throw new UnsupportedConstraintError(
      `Unsupported regex ${JSON.stringify(this.src)}: ${what} at position ${this.pos}`,
    )
  }

  parse(): GNode {
    if (this.src.startsWith('^')) this.pos = 1
    const node = this.alternation()
    if (this.pos < this.src.length) this.fail(`unexpected ${JSON.stringify(this.src[this.pos])}`)
    return node
  }

  private peek(): string | undefined {
    return this.src[this.pos]
  }

  private alternation(): GNode {
    const branches = [this.sequence()]
    while (this.peek() === '|') {
      this.pos++
      branches.push(this.sequence())
    }
    return alt(...branches)
  }

  private sequence(): GNode {
    const items: GNode[] = []
    while (this.pos < this.src.length && this.peek() !== '|' && this.peek() !== ')') {
      if (this.peek() === '$') {
        this.pos++
        if (this.pos !== this.src.length && this.peek() !== ')' && this.peek() !== '|') this.fail('`$` before the end')
        continue
      }
      items.push(this.quantified(this.atom()))
    }
    return items.length === 0 ? EMPTY : seq(...items)
  }

  private quantified(node: GNode): GNode {
    let out = node
    for (;;) {
      const ch = this.peek()
      let min: number
      let max: number
      if (ch === '*') [min, max] = [0, Number.POSITIVE_INFINITY]
      else if (ch === '+') [min, max] = [1, Number.POSITIVE_INFINITY]
      else if (ch === '?') [min, max] = [0, 1]
      else if (ch === '{' && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.pos))) {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos)) as RegExpExecArray
        min = Number(m[1])
        max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3])
        if (max < min) this.fail('a repetition whose maximum is below its minimum')
        if (min > 10_000 || (max !== Number.POSITIVE_INFINITY && max > 10_000))
          this.fail('a repetition count above 10000')
        this.pos += m[0].length - 1
      } else return out
      this.pos++
      if (this.peek() === '?' || this.peek() === '+') this.pos++
      out = rep(out, min, max)
    }
  }

  private chars(ranges: Ranges): GNode {
    const norm = normaliseRanges(ranges)
    if (!this.json) return codePoints(norm)
    const safe: Ranges = []
    const escapes: GNode[] = []
    for (const [lo, hi] of norm) {
      for (let cp = lo; cp <= Math.min(hi, 0x5c); cp++) {
        if (cp < 0x20 || cp === 0x22 || cp === 0x5c) escapes.push(lit(jsonEscape(cp)))
      }
    }
    for (const r of negateRanges([
      [0x00, 0x1f],
      [0x22, 0x22],
      [0x5c, 0x5c],
    ])) {
      const lo = Math.max(r[0], 0)
      for (const [a, b] of norm)
        if (Math.max(a, lo) <= Math.min(b, r[1])) safe.push([Math.max(a, lo), Math.min(b, r[1])])
    }
    return alt(...(safe.length > 0 ? [codePoints(safe)] : []), ...escapes)
  }

  private atom(): GNode {
    const ch = this.src[this.pos++] as string
    switch (ch) {
      case '(': {
        if (this.src.startsWith('?:', this.pos)) this.pos += 2
        else if (this.peek() === '?') this.fail('lookaround or named groups')
        const inner = this.alternation()
        if (this.peek() !== ')') this.fail('an unclosed group')
        this.pos++
        return inner
      }
      case '[':
        return this.chars(this.classBody())
      case '.':
        return this.chars(negateRanges([[0x0a, 0x0a]]))
      case '\\':
        return this.chars(this.escape(false))
      case '^':
        return this.fail('`^` after the start')
      case '*':
      case '+':
      case '?':
      case '{':
        if (ch === '{' && !/^\d/.test(this.peek() ?? '')) return this.chars([[0x7b, 0x7b]])
        return this.fail('a quantifier without a target')
      default: {
        const cp = this.src.codePointAt(this.pos - 1) as number
        if (cp > 0xffff) this.pos++
        return this.chars([[cp, cp]])
      }
    }
  }

  private escape(inClass: boolean): Ranges {
    const ch = this.src[this.pos++]
    if (ch === undefined) this.fail('a trailing backslash')
    const simple: Record<string, number> = { n: 10, r: 13, t: 9, f: 12, v: 11, '0': 0 }
    if (simple[ch] !== undefined) return [[simple[ch], simple[ch]]]
    if (ch === 'd') return DIGIT
    if (ch === 'D') return negateRanges(DIGIT)
    if (ch === 'w') return WORD
    if (ch === 'W') return negateRanges(WORD)
    if (ch === 's') return SPACE
    if (ch === 'S') return negateRanges(SPACE)
    if (ch === 'b' && inClass) return [[8, 8]]
    if (ch === 'x' || ch === 'u') {
      const m =
        ch === 'x'
          ? /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.pos))
          : /^(\{[0-9a-fA-F]{1,6}\}|[0-9a-fA-F]{4})/.exec(this.src.slice(this.pos))
      if (!m) this.fail(`a malformed \\${ch} escape`)
      this.pos += m[0].length
      const cp = Number.parseInt(m[0].replace(/[{}]/g, ''), 16)
      return [[cp, cp]]
    }
    if (/[a-zA-Z1-9]/.test(ch)) this.fail(`the escape \\${ch}`)
    const cp = ch.codePointAt(0) as number
    return [[cp, cp]]
  }

  private classAtom(): Ranges {
    if (this.peek() === '\\') {
      this.pos++
      return this.escape(true)
    }
    const cp = this.src.codePointAt(this.pos) as number
    this.pos += cp > 0xffff ? 2 : 1
    return [[cp, cp]]
  }

  private classBody(): Ranges {
    const negated = this.peek() === '^'
    if (negated) this.pos++
    const ranges: Ranges = []
    let first = true
    while (this.peek() !== ']' || first) {
      if (this.pos >= this.src.length) this.fail('an unclosed character class')
      first = false
      const lo = this.classAtom()
      if (
        this.peek() === '-' &&
        this.src[this.pos + 1] !== ']' &&
        this.src[this.pos + 1] !== undefined &&
        lo.length === 1
      ) {
        this.pos++
        const hi = this.classAtom()
        const a = (lo[0] as [number, number])[0]
        const b = (hi[0] as [number, number])[1]
        if (hi.length !== 1 || b < a) this.fail('an invalid class range')
        ranges.push([a, b])
      } else ranges.push(...lo)
    }
    this.pos++
    return negated ? negateRanges(ranges) : ranges
  }
}
