/**
 * The grammar language every structured-output format compiles to: rules made of byte sets, sequences, alternations,
 * bounded repetitions and references to other rules (so JSON's recursion fits). Parsers for regex, JSON Schema and
 * GBNF produce these nodes; `matcher.ts` runs them byte by byte.
 */

/** A set of bytes as a 256-entry membership table. */
export type ByteSet = Uint8Array

/** One grammar node. */
export type GNode =
  | { t: 'bytes'; set: ByteSet }
  | { t: 'seq'; items: GNode[] }
  | { t: 'alt'; items: GNode[] }
  | { t: 'rep'; item: GNode; min: number; max: number }
  | { t: 'ref'; name: string }

/** A grammar: named rules and the rule a complete output must match. */
export type Grammar = { rules: Map<string, GNode>; root: string }

/** Raised for a grammar, regex or schema the engine cannot enforce; the backend answers it with a 400. */
export class UnsupportedConstraintError extends Error {}

/** A byte set from inclusive ranges. */
export function byteSet(...ranges: [number, number][]): ByteSet {
  const set = new Uint8Array(256)
  for (const [lo, hi] of ranges) for (let b = lo; b <= hi; b++) set[b] = 1
  return set
}

/** One byte from the set. */
export function bytes(set: ByteSet): GNode {
  return { t: 'bytes', set }
}

/** The nodes in order. */
export function seq(...items: GNode[]): GNode {
  return items.length === 1 ? (items[0] as GNode) : { t: 'seq', items }
}

/** Any one of the nodes. */
export function alt(...items: GNode[]): GNode {
  return items.length === 1 ? (items[0] as GNode) : { t: 'alt', items }
}

/** Between `min` and `max` repetitions (`max` may be Infinity). */
export function rep(item: GNode, min: number, max: number): GNode {
  return { t: 'rep', item, min, max }
}

/** Zero or one. */
export function opt(item: GNode): GNode {
  return rep(item, 0, 1)
}

/** A reference to a named rule. */
export function ref(name: string): GNode {
  return { t: 'ref', name }
}

/** The empty sequence. */
export const EMPTY: GNode = { t: 'seq', items: [] }

const utf8 = new TextEncoder()

/** The exact UTF-8 bytes of a string. */
export function lit(text: string): GNode {
  return seq(...[...utf8.encode(text)].map((b) => bytes(byteSet([b, b]))))
}

// Code point ranges → UTF-8 byte-range sequences (the construction of Rust's `regex-syntax` Utf8Sequences).
function utf8Sequences(lo: number, hi: number, out: [number, number][][]): void {
  if (lo > hi) return
  if (lo <= 0xdfff && hi >= 0xd800) {
    utf8Sequences(lo, 0xd7ff, out)
    utf8Sequences(0xe000, hi, out)
    return
  }
  for (const edge of [0x7f, 0x7ff, 0xffff]) {
    if (lo <= edge && hi > edge) {
      utf8Sequences(lo, edge, out)
      utf8Sequences(edge + 1, hi, out)
      return
    }
  }
  if (hi < 0x80) {
    out.push([[lo, hi]])
    return
  }
  const n = hi <= 0x7ff ? 2 : hi <= 0xffff ? 3 : 4
  for (let i = 1; i < n; i++) {
    const max = (1 << (6 * i)) - 1
    if ((lo & ~max) !== (hi & ~max)) {
      if ((lo & max) !== 0) {
        utf8Sequences(lo, lo | max, out)
        utf8Sequences((lo | max) + 1, hi, out)
        return
      }
      if ((hi & max) !== max) {
        utf8Sequences(lo, (hi & ~max) - 1, out)
        utf8Sequences(hi & ~max, hi, out)
        return
      }
    }
  }
  const a = [...utf8.encode(String.fromCodePoint(lo))]
  const b = [...utf8.encode(String.fromCodePoint(hi))]
  out.push(a.map((x, i) => [x, b[i] as number]))
}

/** One code point from inclusive code point ranges, as UTF-8 bytes. */
export function codePoints(ranges: [number, number][]): GNode {
  const sequences: [number, number][][] = []
  for (const [lo, hi] of ranges) utf8Sequences(lo, hi, sequences)
  const single = byteSet()
  const multi: GNode[] = []
  for (const s of sequences) {
    if (s.length === 1) {
      const [lo, hi] = s[0] as [number, number]
      for (let b = lo; b <= hi; b++) single[b] = 1
    } else {
      multi.push(seq(...s.map(([lo, hi]) => bytes(byteSet([lo, hi])))))
    }
  }
  const items = single.some((x) => x === 1) ? [bytes(single), ...multi] : multi
  if (items.length === 0) throw new UnsupportedConstraintError('A character class matches no character')
  return alt(...items)
}

/** Normalises ranges: sorted, merged, within 0..0x10FFFF. */
export function normaliseRanges(ranges: [number, number][]): [number, number][] {
  const sorted = ranges.map(([a, b]) => [Math.max(0, a), Math.min(0x10ffff, b)] as [number, number])
  sorted.sort((x, y) => x[0] - y[0])
  const out: [number, number][] = []
  for (const r of sorted) {
    const last = out[out.length - 1]
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1])
    else if (r[0] <= r[1]) out.push([r[0], r[1]])
  }
  return out
}

/** The complement of ranges within all code points. */
export function negateRanges(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = []
  let next = 0
  for (const [lo, hi] of normaliseRanges(ranges)) {
    if (lo > next) out.push([next, lo - 1])
    next = hi + 1
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff])
  return out
}
