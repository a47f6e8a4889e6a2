import { type ByteSet, type GNode, type Grammar, UnsupportedConstraintError } from '#shared/engine/grammar/ast'

/**
 * Builds one Thompson NFA per grammar rule, whose edges read a byte, move silently, or call another rule, after
 * checking that the grammar's size stays within `MAX_GRAMMAR_STATES`. `compile.ts` adds the derived facts.
 */

/** Edge kinds: read a byte of a set, move silently, or call a rule. */
export const BYTE = 0
export const EPS = 1
export const CALL = 2

/**
 * One compiled rule, its edges in flat arrays (a few hundred thousand states would otherwise be as many small arrays
 * and objects, and their allocation dominated compile time). The edges of state s are the indexes `first[s]` to
 * `first[s + 1] - 1` of `kind`, `to` and `arg`; `arg` is a byte edge's set (an index into `Nfa.sets`) or a call
 * edge's rule. `dist[s]`: fewest bytes from s to the accept state, a call costing its rule's shortest match.
 * `tail[s]`: from s the rule can only return (silent moves to its accept state), so a call made there needs no frame
 * of its own to come back to; right recursion (`a ::= "x" a | ""`, free text) then keeps a constant stack.
 */
export type Rule = {
  start: number
  accept: number
  first: Int32Array
  kind: Uint8Array
  to: Int32Array
  arg: Int32Array
  dist: Float64Array
  tail: Uint8Array
}

/** A compiled grammar: its rules, the byte sets their edges read, and the root rule. */
export type Nfa = { rules: Rule[]; sets: ByteSet[]; root: number }

/** Most NFA states a constraint may compile to; a larger one is refused before any state is built. */
export const MAX_GRAMMAR_STATES = 400_000

// The states `compileRule` creates for a node, counted without building them (a subtree used in several places is
// counted at each use, computed once).
function stateCount(node: GNode, memo: Map<GNode, number>): number {
  const known = memo.get(node)
  if (known !== undefined) return known
  let n: number
  switch (node.t) {
    case 'bytes':
    case 'ref':
      n = 1
      break
    case 'seq':
      n = node.items.reduce((sum, item) => sum + stateCount(item, memo), 0)
      break
    case 'alt':
      n = node.items.reduce((sum, item) => sum + stateCount(item, memo), 1)
      break
    case 'rep': {
      const item = stateCount(node.item, memo)
      const extra = node.max === Number.POSITIVE_INFINITY ? item : (node.max - node.min) * item
      n = node.min * item + 1 + extra
      break
    }
  }
  memo.set(node, n)
  return n
}

function checkSize(grammar: Grammar): void {
  const memo = new Map<GNode, number>()
  let total = 0
  for (const node of grammar.rules.values()) total += 1 + stateCount(node, memo)
  if (total > MAX_GRAMMAR_STATES) {
    throw new UnsupportedConstraintError(
      `The structured output constraint is too large: it needs more than ${MAX_GRAMMAR_STATES.toLocaleString('en-US')} ` +
        `grammar states (${total.toLocaleString('en-US')}); a repetition count multiplies the states of what it repeats`,
    )
  }
}

function compileRule(name: string, node: GNode, index: Map<string, number>, sets: Map<ByteSet, number>): Rule {
  let states = 0
  const edges = { from: [] as number[], kind: [] as number[], to: [] as number[], arg: [] as number[] }
  const add = () => states++
  const edge = (from: number, kind: number, to: number, arg = 0) => {
    edges.from.push(from)
    edges.kind.push(kind)
    edges.to.push(to)
    edges.arg.push(arg)
  }
  const build = (n: GNode, from: number): number => {
    switch (n.t) {
      case 'bytes': {
        const to = add()
        const set = sets.get(n.set) ?? sets.size
        sets.set(n.set, set)
        edge(from, BYTE, to, set)
        return to
      }
      case 'seq':
        return n.items.reduce((at, item) => build(item, at), from)
      case 'alt': {
        const end = add()
        for (const item of n.items) edge(build(item, from), EPS, end)
        return end
      }
      case 'ref': {
        const rule = index.get(n.name)
        if (rule === undefined)
          throw new UnsupportedConstraintError(`Undefined grammar rule \`${n.name}\` in \`${name}\``)
        const to = add()
        edge(from, CALL, to, rule)
        return to
      }
      case 'rep': {
        let at = from
        for (let i = 0; i < n.min; i++) at = build(n.item, at)
        if (n.max === Number.POSITIVE_INFINITY) {
          const loop = add()
          edge(at, EPS, loop)
          edge(build(n.item, loop), EPS, loop)
          return loop
        }
        const end = add()
        for (let i = n.min; i < n.max; i++) {
          edge(at, EPS, end)
          at = build(n.item, at)
        }
        edge(at, EPS, end)
        return end
      }
    }
  }
  const start = add()
  const accept = build(node, start)
  // Group the edges by source state, keeping their order (a counting sort).
  const first = new Int32Array(states + 1)
  for (const from of edges.from) first[from + 1] = (first[from + 1] as number) + 1
  for (let s = 0; s < states; s++) first[s + 1] = (first[s + 1] as number) + (first[s] as number)
  const fill = first.slice(0, states)
  const m = edges.from.length
  const [kind, to, arg] = [new Uint8Array(m), new Int32Array(m), new Int32Array(m)]
  for (let i = 0; i < m; i++) {
    const at = fill[edges.from[i] as number] as number
    fill[edges.from[i] as number] = at + 1
    kind[at] = edges.kind[i] as number
    to[at] = edges.to[i] as number
    arg[at] = edges.arg[i] as number
  }
  const none = { dist: new Float64Array(0), tail: new Uint8Array(0) }
  return { start, accept, first, kind, to, arg, ...none }
}

/** The rules of a grammar as NFAs (distances and tails not yet computed), after the size check. */
export function buildNfa(grammar: Grammar): { rules: Rule[]; sets: ByteSet[]; index: Map<string, number> } {
  const index = new Map<string, number>()
  for (const name of grammar.rules.keys()) index.set(name, index.size)
  checkSize(grammar)
  const sets = new Map<ByteSet, number>()
  const rules = [...grammar.rules].map(([name, node]) => compileRule(name, node, index, sets))
  return { rules, sets: [...sets.keys()], index }
}
