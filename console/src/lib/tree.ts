/** The fields of a call the tree and the waterfall need. */
export type TreeCall = {
  id: string
  parent_id?: string | null
  trace_id?: string | null
  op_name: string
  display_name?: string | null
  started_at: string
  ended_at?: string | null
  exception?: string | null
}

/** A call with its children, sorted by start time then id. */
export type TreeNode<C extends TreeCall = TreeCall> = {
  call: C
  children: TreeNode<C>[]
  /** True when the call names a parent that is not among the calls (not loaded, deleted or not yet written). */
  orphan: boolean
}

/** One visible row of a (partly collapsed) tree. */
export type TreeRow<C extends TreeCall = TreeCall> = { node: TreeNode<C>; depth: number; expanded: boolean }

const byStart = (a: TreeNode, b: TreeNode) =>
  a.call.started_at < b.call.started_at
    ? -1
    : a.call.started_at > b.call.started_at
      ? 1
      : a.call.id < b.call.id
        ? -1
        : a.call.id > b.call.id
          ? 1
          : 0

/**
 * Builds the call tree of flat calls: children under their parent, calls whose parent is missing become roots marked
 * `orphan`, siblings ordered by `started_at` then `id`. A cycle (a corrupt parent chain) cannot hide calls: every
 * call unreachable from a root becomes a root itself. Duplicate ids keep the first call.
 */
export function buildCallTree<C extends TreeCall>(calls: readonly C[]): TreeNode<C>[] {
  const nodes = new Map<string, TreeNode<C>>()
  for (const call of calls) if (!nodes.has(call.id)) nodes.set(call.id, { call, children: [], orphan: false })
  const roots: TreeNode<C>[] = []
  for (const node of nodes.values()) {
    const parentId = node.call.parent_id
    const parent = parentId ? nodes.get(parentId) : undefined
    if (parent === undefined || parent === node) {
      node.orphan = Boolean(parentId) && parent !== node
      roots.push(node)
    } else parent.children.push(node)
  }
  const reached = new Set<string>()
  const mark = (start: TreeNode<C>[]) => {
    const stack = [...start]
    while (stack.length > 0) {
      const node = stack.pop() as TreeNode<C>
      if (reached.has(node.call.id)) continue
      reached.add(node.call.id)
      stack.push(...node.children)
    }
  }
  mark(roots)
  if (reached.size < nodes.size) {
    for (const node of nodes.values()) {
      if (reached.has(node.call.id)) continue
      const parent = node.call.parent_id ? nodes.get(node.call.parent_id) : undefined
      if (parent !== undefined) parent.children = parent.children.filter((c) => c !== node)
      node.orphan = true
      roots.push(node)
      mark([node])
    }
  }
  const sort = (list: TreeNode<C>[]) => {
    const stack = [list]
    while (stack.length > 0) {
      const level = stack.pop() as TreeNode<C>[]
      level.sort(byStart)
      for (const n of level) if (n.children.length > 0) stack.push(n.children)
    }
  }
  sort(roots)
  return roots
}

/**
 * The rows a tree shows with some nodes collapsed, in display order (depth-first, iterative so a 10,000-deep chain
 * does not overflow the stack). Only these rows exist; the virtualised list renders the slice in view.
 */
export function visibleRows<C extends TreeCall>(roots: readonly TreeNode<C>[], collapsed: ReadonlySet<string>) {
  const rows: TreeRow<C>[] = []
  const stack: { node: TreeNode<C>; depth: number }[] = []
  for (let i = roots.length - 1; i >= 0; i--) stack.push({ node: roots[i] as TreeNode<C>, depth: 0 })
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: TreeNode<C>; depth: number }
    const expanded = !collapsed.has(node.call.id)
    rows.push({ node, depth, expanded })
    if (!expanded) continue
    for (let i = node.children.length - 1; i >= 0; i--) {
      stack.push({ node: node.children[i] as TreeNode<C>, depth: depth + 1 })
    }
  }
  return rows
}

/** Number of calls in a subtree, the node included. */
export function subtreeSize(node: TreeNode): number {
  let n = 0
  const stack = [node]
  while (stack.length > 0) {
    const next = stack.pop() as TreeNode
    n++
    stack.push(...next.children)
  }
  return n
}

/** The span of a call on a timeline from `start` to `end` (ms since epoch), as fractions of the whole. */
export type Bar = { offset: number; width: number; running: boolean }

/**
 * Timeline bounds of a set of calls: earliest start to latest end; a running call extends to `now` (so its bar grows
 * with the page's clock).
 */
export function timelineBounds(calls: readonly TreeCall[], now: number): { start: number; end: number } {
  let start = Number.POSITIVE_INFINITY
  let end = Number.NEGATIVE_INFINITY
  for (const call of calls) {
    const s = Date.parse(call.started_at)
    const e = call.ended_at ? Date.parse(call.ended_at) : now
    if (s < start) start = s
    if (e > end) end = e
    if (s > end) end = s
  }
  if (!Number.isFinite(start)) return { start: now, end: now }
  return { start, end }
}

/** Where a call's bar sits on the timeline: offset and width as fractions in [0, 1]; a zero-length call gets 0.2%. */
export function barOf(call: TreeCall, bounds: { start: number; end: number }, now: number): Bar {
  const total = Math.max(1, bounds.end - bounds.start)
  const s = Date.parse(call.started_at)
  const e = call.ended_at ? Date.parse(call.ended_at) : now
  const offset = Math.min(1, Math.max(0, (s - bounds.start) / total))
  const width = Math.min(1 - offset, Math.max(0.002, (e - s) / total))
  return { offset, width, running: !call.ended_at }
}
