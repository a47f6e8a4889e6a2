import type { ByteSet, Grammar } from '#shared/engine/grammar/ast'
import { compileGrammar } from '#shared/engine/grammar/compile'
import { BYTE, EPS, type Rule } from '#shared/engine/grammar/nfa'

/**
 * Runs a grammar byte by byte as a recursive transition network: each rule is a Thompson NFA (`nfa.ts`, `compile.ts`)
 * whose edges read a byte, move silently, or call another rule. A parser state is the set of live call stacks; stacks
 * are hash-consed, so equal states are the same object and every derived fact (closure, allowed bytes, distance to
 * completion) is computed once.
 */

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
  private readonly rules: Rule[]
  private readonly sets: ByteSet[]
  private readonly frames = new Map<string, Frame>()
  private readonly states = new Map<string, MatchState>()
  /** The state before any byte. */
  readonly initial: MatchState

  constructor(grammar: Grammar) {
    const { rules, sets, root } = compileGrammar(grammar)
    this.rules = rules
    this.sets = sets
    this.initial = this.state([this.frame(root, (rules[root] as Rule).start, null)])
  }

  private frame(rule: number, state: number, caller: Frame | null): Frame {
    // A caller frame that can only return adds nothing: return straight to its own caller (same language, and its
    // distance to completion is 0, so `cum` is unchanged).
    let parent = caller
    while (parent !== null && (this.rules[parent.rule] as Rule).tail[parent.state] === 1) parent = parent.parent
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
      for (let i = rule.first[f.state] as number; i < (rule.first[f.state + 1] as number); i++) {
        const to = rule.to[i] as number
        if (rule.kind[i] === BYTE) reads = true
        else if (rule.kind[i] === EPS) stack.push(this.frame(f.rule, to, f.parent))
        else {
          const callee = rule.arg[i] as number
          stack.push(this.frame(callee, (this.rules[callee] as Rule).start, this.frame(f.rule, to, f.parent)))
        }
      }
      if (reads) items.push(f)
    }
    state.closure = { items, accepting }
    return state.closure
  }

  /** How many NFA states the compiled grammar has (its size in memory, whatever was matched since). */
  get grammarStates(): number {
    return this.rules.reduce((sum, rule) => sum + rule.first.length - 1, 0)
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
      const rule = this.rules[f.rule] as Rule
      for (let i = rule.first[f.state] as number; i < (rule.first[f.state + 1] as number); i++) {
        if (rule.kind[i] === BYTE && (this.sets[rule.arg[i] as number] as ByteSet)[byte] === 1)
          next.push(this.frame(f.rule, rule.to[i] as number, f.parent))
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
      const rule = this.rules[f.rule] as Rule
      for (let i = rule.first[f.state] as number; i < (rule.first[f.state + 1] as number); i++) {
        if (rule.kind[i] !== BYTE) continue
        const set = this.sets[rule.arg[i] as number] as ByteSet
        for (let b = 0; b < 256; b++) candidates[b] ||= set[b] as number
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
