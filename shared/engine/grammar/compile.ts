import { type Grammar, UnsupportedConstraintError } from '#shared/engine/grammar/ast'
import { BYTE, buildNfa, CALL, EPS, type Nfa, type Rule } from '#shared/engine/grammar/nfa'

/**
 * Compiles a grammar for the matcher: the NFAs of `nfa.ts`, then each state's fewest bytes to its rule's end, the
 * states that can only return, and the refusal of left recursion. A constraint is compiled on the request path, so
 * every pass here is linear in the number of states (the distances n log n): `[^x]{10000}` alone is about 280,000
 * states, and a pass repeated until nothing changed took minutes on it, with the event loop blocked.
 */

/** The rules of a grammar compiled and analysed. */
export function compileGrammar(grammar: Grammar): Nfa {
  const { rules, sets, index } = buildNfa(grammar)
  computeDistances(rules)
  for (const rule of rules) rule.tail = computeTails(rule)
  checkLeftRecursion(rules)
  const root = index.get(grammar.root)
  if (root === undefined) throw new UnsupportedConstraintError(`The grammar has no rule \`${grammar.root}\``)
  const start = rules[root] as Rule
  if (!Number.isFinite(start.dist[start.start])) throw new UnsupportedConstraintError('The grammar matches no output')
  return { rules, sets, root }
}

// A binary min-heap of (key, item) pairs; stale entries are skipped by the caller (lazy deletion).
class MinHeap {
  private readonly keys: number[] = []
  private readonly items: number[] = []

  get size(): number {
    return this.items.length
  }

  push(key: number, item: number): void {
    let i = this.items.length
    this.keys.push(key)
    this.items.push(item)
    while (i > 0) {
      const up = (i - 1) >> 1
      if ((this.keys[up] as number) <= key) break
      this.keys[i] = this.keys[up] as number
      this.items[i] = this.items[up] as number
      i = up
    }
    this.keys[i] = key
    this.items[i] = item
  }

  pop(): number {
    const top = this.items[0] as number
    const key = this.keys.pop() as number
    const item = this.items.pop() as number
    const n = this.items.length
    if (n === 0) return top
    let i = 0
    for (;;) {
      let child = 2 * i + 1
      if (child >= n) break
      if (child + 1 < n && (this.keys[child + 1] as number) < (this.keys[child] as number)) child++
      if ((this.keys[child] as number) >= key) break
      this.keys[i] = this.keys[child] as number
      this.items[i] = this.items[child] as number
      i = child
    }
    this.keys[i] = key
    this.items[i] = item
    return top
  }
}

// Shortest distances to each rule's accept state over all rules at once: Knuth's generalisation of Dijkstra to
// grammars. A call edge's cost is its target state's distance plus the called rule's shortest match, so it is relaxed
// once both of those are final; every other edge is relaxed when its target is final.
function computeDistances(rules: Rule[]): void {
  const offset: number[] = []
  let nodes = 0
  let links = 0
  for (const rule of rules) {
    offset.push(nodes)
    nodes += rule.first.length - 1
    links += 2 * rule.kind.length
  }
  // Reverse edges as linked lists in flat arrays: a plain edge u -> v is listed under v (tag -1 for a silent move,
  // -2 for a byte); a call edge is listed under both states it waits for (tag = its index in the call arrays).
  const head = new Int32Array(nodes).fill(-1)
  const [next, source, tag] = [new Int32Array(links), new Int32Array(links), new Int32Array(links)]
  const call = { target: [] as number[], a: [] as number[], b: [] as number[], waiting: [] as number[] }
  let used = 0
  const link = (node: number, from: number, t: number) => {
    next[used] = head[node] as number
    source[used] = from
    tag[used] = t
    head[node] = used++
  }
  rules.forEach((rule, r) => {
    const base = offset[r] as number
    for (let s = 0; s + 1 < rule.first.length; s++) {
      for (let i = rule.first[s] as number; i < (rule.first[s + 1] as number); i++) {
        const to = base + (rule.to[i] as number)
        if (rule.kind[i] !== CALL) link(to, base + s, rule.kind[i] === EPS ? -1 : -2)
        else {
          const callee = rule.arg[i] as number
          const start = (offset[callee] as number) + (rules[callee] as Rule).start
          const c = call.target.push(base + s) - 1
          call.a.push(to)
          call.b.push(start)
          call.waiting.push(start === to ? 1 : 2)
          link(to, base + s, c)
          if (start !== to) link(start, base + s, c)
        }
      }
    }
  })
  const dist = new Float64Array(nodes).fill(Number.POSITIVE_INFINITY)
  const done = new Uint8Array(nodes)
  const heap = new MinHeap()
  rules.forEach((rule, r) => {
    dist[(offset[r] as number) + rule.accept] = 0
    heap.push(0, (offset[r] as number) + rule.accept)
  })
  while (heap.size > 0) {
    const u = heap.pop()
    if (done[u] === 1) continue
    done[u] = 1
    for (let i = head[u] as number; i !== -1; i = next[i] as number) {
      const t = tag[i] as number
      let target = source[i] as number
      let d = (dist[u] as number) + (t === -2 ? 1 : 0)
      if (t >= 0) {
        const waiting = (call.waiting[t] as number) - 1
        call.waiting[t] = waiting
        if (waiting > 0) continue
        target = call.target[t] as number
        d = (dist[call.a[t] as number] as number) + (dist[call.b[t] as number] as number)
      }
      if (d < (dist[target] as number)) {
        dist[target] = d
        heap.push(d, target)
      }
    }
  }
  rules.forEach((rule, r) => {
    const base = offset[r] as number
    rule.dist = dist.subarray(base, base + rule.first.length - 1)
  })
}

// Backwards from the accept state over silent moves: a state becomes a tail once every edge it has is a silent move
// to a tail state (each state and edge is visited once).
function computeTails(rule: Rule): Uint8Array {
  const { first, kind, to, accept } = rule
  const states = first.length - 1
  const tail = new Uint8Array(states)
  // Per state, its edges not yet known to lead silently to a tail state; -1 when it has an edge of another kind.
  const blocking = new Int32Array(states)
  const head = new Int32Array(states).fill(-1)
  const [next, source] = [new Int32Array(kind.length), new Int32Array(kind.length)]
  for (let s = 0; s < states; s++) {
    blocking[s] = (first[s + 1] as number) - (first[s] as number)
    for (let i = first[s] as number; i < (first[s + 1] as number); i++) {
      if (kind[i] !== EPS) blocking[s] = -1
      next[i] = head[to[i] as number] as number
      source[i] = s
      head[to[i] as number] = i
    }
  }
  const queue: number[] = []
  if (first[accept] === first[accept + 1]) {
    tail[accept] = 1
    queue.push(accept)
  }
  while (queue.length > 0) {
    for (let i = head[queue.pop() as number] as number; i !== -1; i = next[i] as number) {
      const p = source[i] as number
      const left = (blocking[p] as number) - 1
      if (left < 0) continue
      blocking[p] = left
      if (left === 0 && tail[p] === 0) {
        tail[p] = 1
        queue.push(p)
      }
    }
  }
  return tail
}

// A rule reachable from its own start without reading a byte would make the closure infinite. Rule A "calls B first"
// when a call to B is reachable from A's start over silent moves and calls to rules that can match nothing; left
// recursion is a cycle of that relation. Explicit stacks: a chain of 10,000 optional items is 10,000 silent moves.
function checkLeftRecursion(rules: Rule[]): void {
  const first = rules.map((rule) => {
    const callees = new Set<number>()
    const seen = new Uint8Array(rule.first.length - 1)
    const stack = [rule.start]
    seen[rule.start] = 1
    while (stack.length > 0) {
      const s = stack.pop() as number
      for (let i = rule.first[s] as number; i < (rule.first[s + 1] as number); i++) {
        if (rule.kind[i] === BYTE) continue
        if (rule.kind[i] === CALL) {
          const callee = rule.arg[i] as number
          callees.add(callee)
          const r = rules[callee] as Rule
          if (r.dist[r.start] !== 0) continue
        }
        const to = rule.to[i] as number
        if (seen[to] === 0) {
          seen[to] = 1
          stack.push(to)
        }
      }
    }
    return [...callees]
  })
  // Depth-first search for a cycle: 1 = on the current path, 2 = finished.
  const color = new Uint8Array(rules.length)
  for (let root = 0; root < rules.length; root++) {
    if (color[root] !== 0) continue
    const path: { rule: number; next: number }[] = [{ rule: root, next: 0 }]
    color[root] = 1
    while (path.length > 0) {
      const top = path[path.length - 1] as { rule: number; next: number }
      const callee = (first[top.rule] as number[])[top.next++]
      if (callee === undefined) {
        color[top.rule] = 2
        path.pop()
      } else if (color[callee] === 1) {
        throw new UnsupportedConstraintError('Left-recursive grammar rules are not supported')
      } else if (color[callee] === 0) {
        color[callee] = 1
        path.push({ rule: callee, next: 0 })
      }
    }
  }
}
