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

// A start time as text that sorts as the instant: the API writes a whole second without its fraction, as Python's
// isoformat does (`…:12Z`, then `…:12.010000Z`), so the raw strings would put that call after the rest of its second.
// Times in UTC (`Z`, as the API writes them) keep their digits; any other form goes through Date.parse.
function startKey(at: string): string {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|\+00:00)$/.exec(at)
  if (match !== null) return `${match[1]}.${(match[2] ?? '').padEnd(9, '0')}`
  const ms = Date.parse(at)
  return Number.isNaN(ms) ? at : `${new Date(ms).toISOString().slice(0, 23)}000000`
}

const byStart = (a: TreeNode, b: TreeNode) => {
  const x = startKey(a.call.started_at)
  const y = startKey(b.call.started_at)
  return x < y ? -1 : x > y ? 1 : a.call.id < b.call.id ? -1 : a.call.id > b.call.id ? 1 : 0
}

// The position where `node` belongs in a sibling list ordered by `byStart`; calls mostly arrive in start order, so the
// end is tried first.
function insertAt<C extends TreeCall>(list: TreeNode<C>[], node: TreeNode<C>): number {
  const last = list.at(-1)
  if (last === undefined || byStart(last, node) <= 0) return list.length
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (byStart(list[mid] as TreeNode<C>, node) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

// The position of `node` in a sibling list ordered by `byStart` (ids are unique, so the order places it exactly).
function indexOf<C extends TreeCall>(list: TreeNode<C>[], node: TreeNode<C>): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (byStart(list[mid] as TreeNode<C>, node) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * A call tree that grows as pages of calls arrive, in any order: children under their parent, siblings ordered by
 * `started_at` then `id`. A call whose parent has not arrived is a root marked `orphan` until the parent comes, and
 * then moves under it; one whose parent never comes stays so (not loaded, deleted or in another trace). A corrupt
 * parent chain cannot hide calls: a call that would close a cycle stays a root. Duplicate ids keep the first call.
 * `add` changes the nodes in place; `version` counts the changes.
 */
export class CallForest<C extends TreeCall = TreeCall> {
  readonly roots: TreeNode<C>[] = []
  version = 0
  private readonly nodes = new Map<string, TreeNode<C>>()
  private readonly parents = new Map<TreeNode<C>, TreeNode<C>>()
  // Calls that came before their parent, by the parent's id (they are orphan roots meanwhile).
  private readonly waiting = new Map<string, TreeNode<C>[]>()

  /** Number of distinct calls added. */
  get size(): number {
    return this.nodes.size
  }

  /** Every call added, in the order they came. */
  calls(): C[] {
    return Array.from(this.nodes.values(), (n) => n.call)
  }

  /** Adds a page of calls. */
  add(calls: readonly C[]): void {
    for (const call of calls) {
      if (this.nodes.has(call.id)) continue
      const node: TreeNode<C> = { call, children: [], orphan: false }
      this.nodes.set(call.id, node)
      const parentId = call.parent_id
      const parent = parentId ? this.nodes.get(parentId) : undefined
      if (parent !== undefined && parent !== node) this.attach(node, parent)
      else {
        if (parentId && parent === undefined) {
          node.orphan = true
          const early = this.waiting.get(parentId)
          if (early === undefined) this.waiting.set(parentId, [node])
          else early.push(node)
        }
        this.roots.splice(insertAt(this.roots, node), 0, node)
      }
      const early = this.waiting.get(call.id)
      if (early === undefined) continue
      this.waiting.delete(call.id)
      for (const child of early) {
        if (this.closesCycle(child, node)) continue
        this.roots.splice(indexOf(this.roots, child), 1)
        child.orphan = false
        this.attach(child, node)
      }
    }
    this.version++
  }

  private attach(node: TreeNode<C>, parent: TreeNode<C>): void {
    parent.children.splice(insertAt(parent.children, node), 0, node)
    this.parents.set(node, parent)
  }

  // Whether `child` is `node` or one of its ancestors (then putting `child` under `node` would make a cycle).
  private closesCycle(child: TreeNode<C>, node: TreeNode<C>): boolean {
    for (let at: TreeNode<C> | undefined = node; at !== undefined; at = this.parents.get(at)) {
      if (at === child) return true
    }
    return false
  }
}

/**
 * Builds the call tree of flat calls (see `CallForest`): children under their parent, calls whose parent is missing
 * become roots marked `orphan`, siblings ordered by `started_at` then `id`.
 */
export function buildCallTree<C extends TreeCall>(calls: readonly C[]): TreeNode<C>[] {
  const forest = new CallForest<C>()
  forest.add(calls)
  return forest.roots
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

/** Number of calls below a call (its children, theirs and so on), the call itself not included. */
export function descendantCount(node: TreeNode): number {
  let n = 0
  const stack = [...node.children]
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

/** Levels of indentation the call tree draws; deeper rows keep the deepest indent and show their level as a number. */
export const INDENT_LEVELS = 8

/**
 * How a tree row at `depth` (0 for a root) shows it: its indentation in steps (at most `INDENT_LEVELS`, so a deep call
 * keeps room for its name) and, from the deepest indentation on, its level (1 for a root) as a number, so rows there
 * still tell their depth apart.
 */
export function depthMarks(depth: number): { indent: number; level: number | undefined } {
  return { indent: Math.min(depth, INDENT_LEVELS), level: depth >= INDENT_LEVELS ? depth + 1 : undefined }
}
