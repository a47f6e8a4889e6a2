import {
  alt,
  EMPTY,
  type GNode,
  type Grammar,
  lit,
  ref,
  rep,
  seq,
  UnsupportedConstraintError,
} from '#shared/engine/grammar/ast'
import { regexToNode } from '#shared/engine/grammar/regex'

/**
 * The `grammar` subset the reference engine enforces: GBNF (llama.cpp / xgrammar EBNF) with rules
 * `name ::= …`, double-quoted literals (escapes `\n \r \t \\ \" \xHH \uHHHH`), character classes `[…]` with ranges and
 * negation, `.`, rule references, grouping `( … )`, alternation `|`, the quantifiers `* + ? {m} {m,} {m,n}` and `#`
 * comments. The start rule is `root`. Left recursion, lookahead and tag dispatch are refused.
 */
export function parseGbnf(source: string): Grammar {
  const rules = new Map<string, GNode>()
  const text = source.replace(/\r\n?/g, '\n')
  let pos = 0
  const fail = (what: string): never => {
    throw new UnsupportedConstraintError(`Invalid grammar: ${what} at offset ${pos}`)
  }
  const skip = (newlines: boolean) => {
    for (;;) {
      const ch = text[pos]
      if (ch === '#') while (pos < text.length && text[pos] !== '\n') pos++
      else if (ch === ' ' || ch === '\t' || (newlines && ch === '\n')) pos++
      else return
    }
  }
  const name = () => {
    const m = /^[a-zA-Z_][a-zA-Z0-9_.-]*/.exec(text.slice(pos))
    if (!m) fail('expected a rule name')
    pos += (m as RegExpExecArray)[0].length
    return (m as RegExpExecArray)[0]
  }
  const atRuleStart = () => /^[a-zA-Z_][a-zA-Z0-9_.-]*[ \t]*::=/.test(text.slice(pos))

  const literal = (): GNode => {
    pos++
    let out = ''
    while (text[pos] !== '"') {
      if (pos >= text.length || text[pos] === '\n') fail('an unterminated string literal')
      if (text[pos] === '\\') {
        const e = text[pos + 1]
        const simple: Record<string, string> = {
          n: '\n',
          r: '\r',
          t: '\t',
          '\\': '\\',
          '"': '"',
          "'": "'",
          '[': '[',
          ']': ']',
        }
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e]
          pos += 2
        } else if (e === 'x' || e === 'u') {
          const len = e === 'x' ? 2 : 4
          const hex = text.slice(pos + 2, pos + 2 + len)
          if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) fail('a malformed escape')
          out += String.fromCodePoint(Number.parseInt(hex, 16))
          pos += 2 + len
        } else fail('an unknown escape')
      } else {
        const cp = text.codePointAt(pos) as number
        out += String.fromCodePoint(cp)
        pos += cp > 0xffff ? 2 : 1
      }
    }
    pos++
    return lit(out)
  }

  const charClass = (): GNode => {
    const start = pos
    pos++
    if (text[pos] === '^') pos++
    if (text[pos] === ']') pos++
    while (text[pos] !== ']') {
      if (pos >= text.length || text[pos] === '\n') fail('an unterminated character class')
      pos += text[pos] === '\\' ? 2 : 1
    }
    pos++
    return regexToNode(text.slice(start, pos))
  }

  const alternatives = (): GNode => {
    const branches = [sequence()]
    while (text[pos] === '|') {
      pos++
      skip(true)
      branches.push(sequence())
    }
    return alt(...branches)
  }

  const sequence = (): GNode => {
    const items: GNode[] = []
    for (;;) {
      skip(false)
      if (text[pos] === '\n') {
        const save = pos
        skip(true)
        if (pos >= text.length || atRuleStart() || text[pos] === ')') {
          pos = save
          break
        }
        if (text[pos] === '|') break
        continue
      }
      const ch = text[pos]
      if (ch === undefined || ch === '|' || ch === ')') break
      let node: GNode
      if (ch === '"') node = literal()
      else if (ch === '[') node = charClass()
      else if (ch === '.') {
        pos++
        node = regexToNode('[\\s\\S]')
      } else if (ch === '(') {
        pos++
        skip(true)
        node = alternatives()
        skip(true)
        if (text[pos] !== ')') fail('an unclosed group')
        pos++
      } else node = ref(name())
      items.push(quantifier(node))
    }
    return items.length === 0 ? EMPTY : seq(...items)
  }

  const quantifier = (node: GNode): GNode => {
    const ch = text[pos]
    if (ch === '*' || ch === '+' || ch === '?') {
      pos++
      return rep(node, ch === '+' ? 1 : 0, ch === '?' ? 1 : Number.POSITIVE_INFINITY)
    }
    const m = /^\{\s*(\d+)\s*(,\s*(\d*)\s*)?\}/.exec(text.slice(pos))
    if (!m) return node
    pos += m[0].length
    const min = Number(m[1])
    const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3])
    if (max < min || min > 10_000 || (max !== Number.POSITIVE_INFINITY && max > 10_000)) fail('an invalid repetition')
    return rep(node, min, max)
  }

  skip(true)
  while (pos < text.length) {
    const rule = name()
    skip(false)
    if (!text.startsWith('::=', pos)) fail('expected `::=`')
    pos += 3
    skip(true)
    if (rules.has(rule)) fail(`rule \`${rule}\` defined twice`)
    rules.set(rule, alternatives())
    skip(true)
  }
  if (!rules.has('root')) throw new UnsupportedConstraintError('Invalid grammar: no `root` rule')
  return { rules, root: 'root' }
}
