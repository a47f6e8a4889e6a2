import {
  alt,
  byteSet,
  bytes,
  codePoints,
  EMPTY,
  type GNode,
  lit,
  negateRanges,
  opt,
  rep,
  seq,
  UnsupportedConstraintError,
} from '#shared/engine/grammar/ast'
import { regexToNode } from '#shared/engine/grammar/regex'

/** Grammar pieces for JSON text: characters, strings, numbers, integer ranges and the generic value rules. */

const DIGIT = bytes(byteSet([0x30, 0x39]))
const NONZERO = bytes(byteSet([0x31, 0x39]))
// Longer numerals parse to imprecise or infinite numbers, which then fail `integer` checks.
const MAX_DIGITS = 15

/** One JSON string character: a raw character or an escape. */
export function jsonChar(): GNode {
  const raw = codePoints(
    negateRanges([
      [0x00, 0x1f],
      [0x22, 0x22],
      [0x5c, 0x5c],
    ]),
  )
  const hex = bytes(byteSet([0x30, 0x39], [0x41, 0x46], [0x61, 0x66]))
  const escaped = seq(
    lit('\\'),
    alt(
      bytes(
        byteSet(
          [0x22, 0x22],
          [0x5c, 0x5c],
          [0x2f, 0x2f],
          [0x62, 0x62],
          [0x66, 0x66],
          [0x6e, 0x6e],
          [0x72, 0x72],
          [0x74, 0x74],
        ),
      ),
      seq(lit('u'), rep(hex, 4, 4)),
    ),
  )
  return alt(raw, escaped)
}

/** Any JSON number (bounded digit counts). */
export function jsonNumber(): GNode {
  const int = seq(opt(lit('-')), alt(lit('0'), seq(NONZERO, rep(DIGIT, 0, MAX_DIGITS - 1))))
  const frac = opt(seq(lit('.'), rep(DIGIT, 1, MAX_DIGITS)))
  const exp = opt(
    seq(bytes(byteSet([0x45, 0x45], [0x65, 0x65])), opt(bytes(byteSet([0x2b, 0x2b], [0x2d, 0x2d]))), rep(DIGIT, 1, 2)),
  )
  return seq(int, frac, exp)
}

function fixedWidth(lo: string, hi: string): GNode {
  if (lo.length === 0) return EMPTY
  const rest = lo.length - 1
  const [l, h] = [lo.charCodeAt(0), hi.charCodeAt(0)]
  if (l === h) return seq(bytes(byteSet([l, l])), fixedWidth(lo.slice(1), hi.slice(1)))
  if (/^0*$/.test(lo.slice(1)) && /^9*$/.test(hi.slice(1))) return seq(bytes(byteSet([l, h])), rep(DIGIT, rest, rest))
  const items = [seq(bytes(byteSet([l, l])), fixedWidth(lo.slice(1), '9'.repeat(rest)))]
  if (l + 1 <= h - 1) items.push(seq(bytes(byteSet([l + 1, h - 1])), rep(DIGIT, rest, rest)))
  items.push(seq(bytes(byteSet([h, h])), fixedWidth('0'.repeat(rest), hi.slice(1))))
  return alt(...items)
}

// Non-negative integers in [a, b] written without leading zeros; b may be Infinity.
function naturalRange(a: number, b: number): GNode {
  const items: GNode[] = []
  const digitsA = String(a).length
  const top = b === Number.POSITIVE_INFINITY ? 10 ** Math.max(digitsA, 1) - 1 : b
  for (let d = digitsA; d <= String(top).length; d++) {
    const lo = Math.max(a, d === 1 ? 0 : 10 ** (d - 1))
    const hi = Math.min(top, 10 ** d - 1)
    if (lo <= hi) items.push(fixedWidth(String(lo), String(hi)))
  }
  if (b === Number.POSITIVE_INFINITY && digitsA < MAX_DIGITS)
    items.push(seq(NONZERO, rep(DIGIT, digitsA, MAX_DIGITS - 1)))
  return alt(...items)
}

/** Integers in [lo, hi] (either bound may be infinite). */
export function integerRange(from: number, to: number): GNode {
  if (from > to) throw new UnsupportedConstraintError(`No integer lies between ${from} and ${to}`)
  // Numerals are written with at most 15 digits (exact as doubles); a wider bound, such as the ±(2^53−1) of zod's
  // `.int()`, is narrowed to them: every output still lies inside the schema's range. Only a range with no 15-digit
  // integer at all cannot be served.
  const limit = 10 ** MAX_DIGITS - 1
  if (from > limit || to < -limit) {
    throw new UnsupportedConstraintError('Numeric bounds beyond 15 digits are not supported')
  }
  const lo = Number.isFinite(from) ? Math.max(from, -limit) : from
  const hi = Number.isFinite(to) ? Math.min(to, limit) : to
  const items: GNode[] = []
  if (lo <= -1) {
    const negHi = Math.min(hi, -1)
    items.push(seq(lit('-'), naturalRange(-negHi, lo === Number.NEGATIVE_INFINITY ? Number.POSITIVE_INFINITY : -lo)))
  }
  if (hi >= 0) items.push(naturalRange(Math.max(lo, 0), hi))
  return alt(...items)
}

const FORMATS: Record<string, string> = {
  date: '\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])',
  time: '([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)',
  'date-time':
    '\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\\d|2[0-8])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)',
  uuid: '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
  email: '[a-z0-9]([a-z0-9._-]{0,30}[a-z0-9])?@[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?(\\.[a-z]{2,6}){1,2}',
  // A conservative subset of RFC 3986: an http(s) URL with a host name and an optional plain path.
  uri: 'https?://[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?){0,3}(/[A-Za-z0-9._~-]{0,30}){0,4}',
}

/** The inside of a JSON string matching a `format`, or an error for formats the engine cannot enforce. */
export function formatNode(format: string): GNode {
  const source = FORMATS[format]
  if (source === undefined) throw new UnsupportedConstraintError(`JSON schema format \`${format}\` is not supported`)
  return regexToNode(source, { jsonString: true })
}

/** The inside of a JSON string whose decoded text contains a match of `pattern` (JSON Schema's search semantics). */
export function patternNode(pattern: string): GNode {
  const anchoredStart = pattern.startsWith('^')
  const anchoredEnd = pattern.endsWith('$') && !pattern.endsWith('\\$')
  const core = pattern.slice(anchoredStart ? 1 : 0, anchoredEnd ? -1 : undefined)
  const any = '[\\s\\S]*'
  return regexToNode(`${anchoredStart ? '' : any}(?:${core})${anchoredEnd ? '' : any}`, { jsonString: true })
}

/** The keys of an object that may not equal any of `names` (ASCII-only while they still could). */
export function keyExcluding(names: readonly string[], char: GNode): GNode {
  type Trie = { end: boolean; children: Map<number, Trie> }
  const root: Trie = { end: false, children: new Map() }
  for (const name of names) {
    let node = root
    for (const cp of name) {
      const c = cp.codePointAt(0) as number
      let next = node.children.get(c)
      if (!next) {
        next = { end: false, children: new Map() }
        node.children.set(c, next)
      }
      node = next
    }
    node.end = true
  }
  const free = seq(rep(char, 0, Number.POSITIVE_INFINITY), lit('"'))
  const build = (node: Trie): GNode => {
    const items: GNode[] = []
    if (!node.end) items.push(lit('"'))
    const others = byteSet([0x20, 0x21], [0x23, 0x5b], [0x5d, 0x7e])
    for (const [c, child] of node.children) {
      if (c < 0x80 && c >= 0x20 && c !== 0x22 && c !== 0x5c) {
        others[c] = 0
        items.push(seq(bytes(byteSet([c, c])), build(child)))
      }
    }
    items.push(seq(bytes(others), free))
    return alt(...items)
  }
  return seq(lit('"'), build(root))
}
