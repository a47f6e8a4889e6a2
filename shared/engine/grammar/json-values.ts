import {
  alt,
  byteSet,
  bytes,
  codePoints,
  type GNode,
  lit,
  negateRanges,
  rep,
  seq,
  UnsupportedConstraintError,
} from '#shared/engine/grammar/ast'
import { regexToNode } from '#shared/engine/grammar/regex'

/** Grammar pieces for JSON strings: characters, formats, patterns and the keys an object may add. */

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
