import { alt, byteSet, bytes, EMPTY, type GNode, type Grammar, ref, seq } from '#shared/engine/grammar/ast'
import type { JsonLayoutOptions } from '#shared/engine/grammar/json-schema'

/** A string free text must not contain; on its last byte the text goes on with `next` (null: it is refused). */
export type Pattern = { text: string; next: GNode | null }

const utf8 = new TextEncoder()

/** The rules of a structural tag's grammar as they are built: fresh names, embedded sub-grammars and free text. */
export class Builder {
  readonly rules = new Map<string, GNode>()
  private count = 0

  constructor(readonly options: JsonLayoutOptions) {}

  name(kind: string): string {
    return `st${this.count++}:${kind}`
  }

  // A compiled sub-grammar (JSON Schema, GBNF) joins this one under fresh rule names.
  embed(grammar: Grammar, kind: string): GNode {
    const prefix = this.name(kind)
    const rename = (n: GNode): GNode => {
      switch (n.t) {
        case 'ref':
          return ref(`${prefix}/${n.name}`)
        case 'seq':
        case 'alt':
          return { t: n.t, items: n.items.map(rename) }
        case 'rep':
          return { ...n, item: rename(n.item) }
        default:
          return n
      }
    }
    for (const [name, node] of grammar.rules) this.rules.set(`${prefix}/${name}`, rename(node))
    return ref(`${prefix}/${grammar.root}`)
  }

  /**
   * Text that contains none of the patterns except as its end: on a pattern's last byte the text continues with the
   * pattern's `next` (null: the pattern is refused). `endless` allows the text to stop anywhere.
   */
  freeText(patterns: Pattern[], endless: boolean): GNode {
    const { next, fail, ends } = automaton(patterns.map((p) => p.text))
    const step = (state: number, byte: number): number => {
      let s = state
      while (s !== 0 && !next[s]?.has(byte)) s = fail[s] as number
      return next[s]?.get(byte) ?? 0
    }
    // The pattern a state completes: a refused one wins over one with a continuation, then the longest.
    const matched = (state: number): Pattern | undefined => {
      let found: Pattern | undefined
      for (let s = state; s !== 0; s = fail[s] as number) {
        const p = ends[s] === undefined ? undefined : patterns[ends[s] as number]
        if (p?.next === null) return p
        found ??= p
      }
      return found
    }
    const names = next.map(() => this.name('text'))
    next.forEach((_, state) => {
      const groups = new Map<string, { set: Uint8Array; next: GNode | null }>()
      for (let byte = 0; byte < 256; byte++) {
        const target = step(state, byte)
        const pattern = matched(target)
        const key = pattern === undefined ? `s${target}` : `p${patterns.indexOf(pattern)}`
        let group = groups.get(key)
        if (!group) {
          group = { set: byteSet(), next: pattern === undefined ? ref(names[target] as string) : pattern.next }
          groups.set(key, group)
        }
        group.set[byte] = 1
      }
      const options = [...groups.values()].filter((g) => g.next !== null).map((g) => seq(bytes(g.set), g.next as GNode))
      this.rules.set(names[state] as string, alt(...(endless ? [EMPTY, ...options] : options)))
    })
    return ref(names[0] as string)
  }
}

// A trie of the patterns' UTF-8 bytes with failure links; `ends[s]` is the pattern that ends exactly at state s.
function automaton(texts: string[]) {
  const next: Map<number, number>[] = [new Map()]
  const ends: (number | undefined)[] = [undefined]
  texts.forEach((t, i) => {
    let s = 0
    for (const b of utf8.encode(t)) {
      let to = next[s]?.get(b)
      if (to === undefined) {
        to = next.length
        next.push(new Map())
        ends.push(undefined)
        next[s]?.set(b, to)
      }
      s = to
    }
    ends[s] ??= i
  })
  const fail = next.map(() => 0)
  const queue = [...(next[0]?.values() ?? [])]
  while (queue.length > 0) {
    const u = queue.shift() as number
    for (const [b, v] of next[u] ?? []) {
      let f = fail[u] as number
      while (f !== 0 && !next[f]?.has(b)) f = fail[f] as number
      const to = next[f]?.get(b)
      fail[v] = to !== undefined && to !== v ? to : 0
      queue.push(v)
    }
  }
  return { next, fail, ends }
}
