import { type ByteSet, type GNode, type Grammar, UnsupportedConstraintError } from '#shared/engine/grammar/ast'

/**
 * Runs a grammar byte by byte as a recursive transition network: each rule is a Thompson NFA whose edges read a byte,
 * move silently, or call another rule. A parser state is the set of live call stacks; stacks are hash-consed, so equal
 * states are the same object and every derived fact (closure, allowed bytes, distance to completion) is computed once.
 */

type Edge =
  | { kind: 'byte'; set: ByteSet; to: number }
  | { kind: 'eps'; to: number }
  | { kind: 'call'; rule: number; to: number }
// `tail[s]`: from state s the rule can only return (silent moves to its accept state), so a call made there needs no
// frame of its own to come back to. Right recursion (`a ::= "x" a | ""`, free text) then keeps a constant stack.
type Rule = { edges: Edge[][]; start: number; accept: number; dist: number[]; tail: boolean[] }

// Beyond this many NFA states a schema (e.g. a huge maxLength) is refused rather than compiled.
const MAX_STATES = 400_000

type Frame = { id: number; rule: number; state: number; parent: Frame | null; cum: number }

/** An immutable parser state: the live stacks after some prefix of bytes. */
export type MatchState = {
  readonly key: string
  readonly frames: readonly Frame[]
  /** Fewest bytes that complete a valid output from here (0 when complete). */
  readonly dist: number
  closure?: { items: Frame[]; accepting: boolean }
  next?: Map<number, MatchState | null>
  succ?: [number, MatchState][]
}

/** A compiled grammar with its state cache. */
export class Matcher {
  private readonly rules: Rule[] = []
  private readonly index = new Map<string, number>()
  private readonly frames = new Map<string, Frame>()
  private readonly states = new Map<string, MatchState>()
  private stateCount = 0
  /** The state before any byte. */
  readonly initial: MatchState

  constructor(grammar: Grammar) {
    for (const name of grammar.rules.keys()) this.index.set(name, this.index.size)
    for (const [name, node] of grammar.rules) this.rules[this.index.get(name) as number] = this.compileRule(name, node)
    this.computeDistances()
    this.computeTails()
    this.checkLeftRecursion()
    const root = this.index.get(grammar.root)
    if (root === undefined) throw new UnsupportedConstraintError(`The grammar has no rule \`${grammar.root}\``)
    const start = this.rules[root] as Rule
    if (!Number.isFinite(start.dist[start.start])) throw new UnsupportedConstraintError('The grammar matches no output')
    this.initial = this.state([this.frame(root, start.start, null)])
  }

  private compileRule(name: string, node: GNode): Rule {
    const edges: Edge[][] = []
    const add = () => {
      if (++this.stateCount > MAX_STATES)
        throw new UnsupportedConstraintError('The structured output constraint is too large')
      edges.push([])
      return edges.length - 1
    }
    const build = (n: GNode, from: number): number => {
      switch (n.t) {
        case 'bytes': {
          const to = add()
          edges[from]?.push({ kind: 'byte', set: n.set, to })
          return to
        }
        case 'seq':
          return n.items.reduce((at, item) => build(item, at), from)
        case 'alt': {
          const end = add()
          for (const item of n.items) edges[build(item, from)]?.push({ kind: 'eps', to: end })
          return end
        }
        case 'ref': {
          const rule = this.index.get(n.name)
          if (rule === undefined)
            throw new UnsupportedConstraintError(`Undefined grammar rule \`${n.name}\` in \`${name}\``)
          const to = add()
          edges[from]?.push({ kind: 'call', rule, to })
          return to
        }
        case 'rep': {
          let at = from
          for (let i = 0; i < n.min; i++) at = build(n.item, at)
          if (n.max === Number.POSITIVE_INFINITY) {
            const loop = add()
            edges[at]?.push({ kind: 'eps', to: loop })
            edges[build(n.item, loop)]?.push({ kind: 'eps', to: loop })
            return loop
          }
          const end = add()
          for (let i = n.min; i < n.max; i++) {
            edges[at]?.push({ kind: 'eps', to: end })
            at = build(n.item, at)
          }
          edges[at]?.push({ kind: 'eps', to: end })
          return end
        }
      }
    }
    const start = add()
    const accept = build(node, start)
    return { edges, start, accept, dist: [], tail: [] }
  }

  private computeTails(): void {
    for (const rule of this.rules) {
      const { edges, accept } = rule
      const tail = edges.map((out, s) => s === accept && out.length === 0)
      let changed = true
      while (changed) {
        changed = false
        edges.forEach((out, s) => {
          if (tail[s] || out.length === 0) return
          if (out.every((e) => e.kind === 'eps' && tail[e.to] === true)) {
            tail[s] = true
            changed = true
          }
        })
      }
      rule.tail = tail
    }
  }

  // Fewest bytes from each NFA state to its rule's accept state, with calls costing their rule's shortest match.
  private computeDistances(): void {
    for (const rule of this.rules) rule.dist = rule.edges.map(() => Number.POSITIVE_INFINITY)
    let changed = true
    while (changed) {
      changed = false
      for (const rule of this.rules) {
        const { dist, edges } = rule
        if (dist[rule.accept] !== 0) {
          dist[rule.accept] = 0
          changed = true
        }
        for (let s = edges.length - 1; s >= 0; s--) {
          for (const e of edges[s] as Edge[]) {
            const cost = e.kind === 'byte' ? 1 : e.kind === 'eps' ? 0 : this.minLength(e.rule)
            const d = cost + (dist[e.to] as number)
            if (d < (dist[s] as number)) {
              dist[s] = d
              changed = true
            }
          }
        }
      }
    }
  }

  private minLength(rule: number): number {
    const r = this.rules[rule] as Rule
    return r.dist[r.start] as number
  }

  // A rule reachable from its own start without reading a byte would make the closure infinite.
  private checkLeftRecursion(): void {
    this.rules.forEach((rule, id) => {
      const seen = new Set<string>()
      const walk = (r: number, s: number, depth: number) => {
        const key = `${r}:${s}`
        if (seen.has(key)) return
        seen.add(key)
        for (const e of (this.rules[r] as Rule).edges[s] as Edge[]) {
          if (e.kind === 'eps') walk(r, e.to, depth)
          else if (e.kind === 'call') {
            if (e.rule === id) throw new UnsupportedConstraintError('Left-recursive grammar rules are not supported')
            walk(e.rule, (this.rules[e.rule] as Rule).start, depth + 1)
            if (this.minLength(e.rule) === 0) walk(r, e.to, depth)
          }
        }
      }
      walk(id, rule.start, 0)
    })
  }

  private frame(rule: number, state: number, caller: Frame | null): Frame {
    // A caller frame that can only return adds nothing: return straight to its own caller (same language, and its
    // distance to completion is 0, so `cum` is unchanged).
    let parent = caller
    while (parent !== null && (this.rules[parent.rule] as Rule).tail[parent.state] === true) parent = parent.parent
    const key = `${rule}:${state}:${parent?.id ?? -1}`
    let f = this.frames.get(key)
    if (!f) {
      const own = (this.rules[rule] as Rule).dist[state] as number
      f = { id: this.frames.size, rule, state, parent, cum: own + (parent?.cum ?? 0) }
      this.frames.set(key, f)
    }
    return f
  }

  private state(frames: Frame[]): MatchState {
    const unique = [...new Map(frames.map((f) => [f.id, f])).values()].sort((a, b) => a.id - b.id)
    const key = unique.map((f) => f.id).join(',')
    let s = this.states.get(key)
    if (!s) {
      s = { key, frames: unique, dist: unique.reduce((m, f) => Math.min(m, f.cum), Number.POSITIVE_INFINITY) }
      this.states.set(key, s)
    }
    return s
  }

  private close(state: MatchState): { items: Frame[]; accepting: boolean } {
    if (state.closure) return state.closure
    const items: Frame[] = []
    const seen = new Set<number>()
    let accepting = false
    const stack = [...state.frames]
    while (stack.length > 0) {
      const f = stack.pop() as Frame
      if (seen.has(f.id)) continue
      seen.add(f.id)
      const rule = this.rules[f.rule] as Rule
      if (f.state === rule.accept) {
        if (f.parent === null) accepting = true
        else stack.push(f.parent)
      }
      let reads = false
      for (const e of rule.edges[f.state] as Edge[]) {
        if (e.kind === 'byte') reads = true
        else if (e.kind === 'eps') stack.push(this.frame(f.rule, e.to, f.parent))
        else stack.push(this.frame(e.rule, (this.rules[e.rule] as Rule).start, this.frame(f.rule, e.to, f.parent)))
      }
      if (reads) items.push(f)
    }
    state.closure = { items, accepting }
    return state.closure
  }

  /** How many parser states are cached (callers drop a matcher whose cache grew too large). */
  get cachedStates(): number {
    return this.states.size
  }

  /** Whether the bytes so far form a complete output. */
  accepting(state: MatchState): boolean {
    return this.close(state).accepting
  }

  /** The state after one more byte, or null when the byte cannot extend a valid output. */
  advance(state: MatchState, byte: number): MatchState | null {
    state.next ??= new Map()
    const cached = state.next.get(byte)
    if (cached !== undefined) return cached
    const next: Frame[] = []
    for (const f of this.close(state).items) {
      for (const e of (this.rules[f.rule] as Rule).edges[f.state] as Edge[]) {
        if (e.kind === 'byte' && e.set[byte] === 1) next.push(this.frame(f.rule, e.to, f.parent))
      }
    }
    const result = next.length === 0 ? null : this.state(next)
    state.next.set(byte, result)
    return result
  }

  /** Every byte that extends a valid output, with the state it leads to. */
  successors(state: MatchState): [number, MatchState][] {
    if (state.succ) return state.succ
    const out: [number, MatchState][] = []
    const candidates = new Uint8Array(256)
    for (const f of this.close(state).items) {
      for (const e of (this.rules[f.rule] as Rule).edges[f.state] as Edge[]) {
        if (e.kind === 'byte') for (let b = 0; b < 256; b++) candidates[b] ||= e.set[b] as number
      }
    }
    for (let b = 0; b < 256; b++) {
      if (candidates[b] !== 1) continue
      const next = this.advance(state, b)
      if (next) out.push([b, next])
    }
    state.succ = out
    return out
  }

  /** Whether a whole byte string is a complete output. */
  matches(text: Uint8Array): boolean {
    let s: MatchState | null = this.initial
    for (const b of text) {
      s = this.advance(s, b)
      if (!s) return false
    }
    return this.accepting(s)
  }
}
