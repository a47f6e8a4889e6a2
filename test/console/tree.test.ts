import { describe, expect, it } from 'vitest'
import {
  barOf,
  buildCallTree,
  CallForest,
  depthMarks,
  descendantCount,
  INDENT_LEVELS,
  type TreeCall,
  type TreeNode,
  timelineBounds,
  visibleRows,
} from '../../console/src/lib/tree.js'

const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString()
const call = (id: string, parent: string | null, start: number, end: number | null = start + 1): TreeCall => ({
  id,
  parent_id: parent,
  trace_id: 't',
  op_name: `op-${id}`,
  started_at: at(start),
  ended_at: end === null ? null : at(end),
})
const ids = (nodes: TreeNode[]) => nodes.map((n) => n.call.id)

describe('buildCallTree', () => {
  it('nests children under their parents and orders siblings by start time, then id', () => {
    // Prepare: given out of order
    const calls = [
      call('c2', 'root', 5),
      call('root', null, 0, 10),
      call('c1', 'root', 2),
      call('c0', 'root', 2),
      call('g', 'c1', 3),
    ]

    // Act
    const roots = buildCallTree(calls)

    // Assess
    expect(ids(roots)).toEqual(['root'])
    expect(ids(roots[0]?.children ?? [])).toEqual(['c0', 'c1', 'c2'])
    expect(ids(roots[0]?.children[1]?.children ?? [])).toEqual(['g'])
    expect(roots[0]?.orphan).toBe(false)
  })

  it('orders siblings by the instant, whether the API wrote a whole second with or without its fraction', () => {
    // Prepare: the API writes a whole second as Python's isoformat does (`…:12Z`), other times with microseconds
    const started = (id: string, startedAt: string): TreeCall => ({ ...call(id, 'root', 0), started_at: startedAt })
    const calls = [
      call('root', null, 0, 20),
      started('after', '2025-01-01T00:00:12.010000Z'),
      started('whole', '2025-01-01T00:00:12Z'),
      started('before', '2025-01-01T00:00:11.990000Z'),
      started('offset', '2025-01-01T00:00:12.005000+00:00'),
      started('ms', '2025-01-01T00:00:12.020Z'),
    ]

    // Act
    const roots = buildCallTree(calls)

    // Assess
    expect(ids(roots[0]?.children ?? [])).toEqual(['before', 'whole', 'offset', 'after', 'ms'])
  })

  it('makes calls with a missing parent roots, marked as orphans', () => {
    // Act
    const roots = buildCallTree([call('a', null, 0), call('b', 'not-loaded', 1), call('c', 'b', 2)])

    // Assess
    expect(ids(roots)).toEqual(['a', 'b'])
    expect(roots.map((r) => r.orphan)).toEqual([false, true])
    expect(ids(roots[1]?.children ?? [])).toEqual(['c'])
  })

  it('keeps every call of a corrupt parent cycle reachable', () => {
    // Act: x -> y -> x, and z its own parent
    const roots = buildCallTree([call('x', 'y', 0), call('y', 'x', 1), call('z', 'z', 2)])

    // Assess
    const all = new Set<string>()
    for (const r of roots) {
      const stack = [r]
      while (stack.length > 0) {
        const n = stack.pop() as TreeNode
        all.add(n.call.id)
        stack.push(...n.children)
      }
    }
    expect([...all].sort()).toEqual(['x', 'y', 'z'])
    expect(roots.length).toBeGreaterThanOrEqual(2)
  })

  it('keeps the first of duplicate ids', () => {
    const roots = buildCallTree([call('a', null, 0), { ...call('a', null, 9), op_name: 'dup' }])
    expect(roots).toHaveLength(1)
    expect(roots[0]?.call.op_name).toBe('op-a')
  })

  it('builds a 10,000-deep chain without overflowing the stack', () => {
    // Prepare
    const calls = Array.from({ length: 10_000 }, (_, i) => call(`n${i}`, i === 0 ? null : `n${i - 1}`, i))

    // Act
    const roots = buildCallTree(calls)
    const rows = visibleRows(roots, new Set())

    // Assess
    expect(rows).toHaveLength(10_000)
    expect(rows.at(-1)?.depth).toBe(9_999)
    expect(descendantCount(roots[0] as TreeNode)).toBe(9_999)
  })
})

describe('descendantCount', () => {
  it('counts the calls below a call, not the call itself', () => {
    // Prepare: a root with two children, one with a child of its own, and a lone call
    const [root, lone] = buildCallTree([
      call('root', null, 0),
      call('a', 'root', 1),
      call('b', 'root', 2),
      call('a1', 'a', 3),
      call('lone', null, 4),
    ])

    // Act + Assess
    expect(descendantCount(root as TreeNode)).toBe(3)
    expect(descendantCount(root?.children[1] as TreeNode)).toBe(0)
    expect(descendantCount(lone as TreeNode)).toBe(0)
  })
})

// A seeded shuffle (mulberry32), so a failure replays.
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let a = seed
  const random = () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

const shape = (roots: readonly TreeNode[]) =>
  visibleRows(roots, new Set()).map((r) => `${r.depth}:${r.node.call.id}${r.node.orphan ? '?' : ''}`)

describe('CallForest', () => {
  it('moves calls that came before their parent under it when the parent arrives', () => {
    // Prepare
    const forest = new CallForest()

    // Act + Assess: the grandchild first, then the child, then the root
    forest.add([call('g', 'c', 3)])
    expect(shape(forest.roots)).toEqual(['0:g?'])
    forest.add([call('c', 'r', 2), call('c2', 'r', 1)])
    expect(shape(forest.roots)).toEqual(['0:c2?', '0:c?', '1:g'])
    forest.add([call('r', null, 0, 10)])
    expect(shape(forest.roots)).toEqual(['0:r', '1:c2', '1:c', '2:g'])
    expect(forest.size).toBe(4)
    expect(forest.version).toBe(3)
  })

  it('builds the same tree from pages in any order as from all calls at once', () => {
    // Prepare: a 4-ary tree of 600 calls, a few of them with a parent outside the trace
    const calls = Array.from({ length: 600 }, (_, i) =>
      call(
        `n${String(i).padStart(3, '0')}`,
        i === 0 ? null : i % 97 === 0 ? 'elsewhere' : `n${String(Math.floor((i - 1) / 4)).padStart(3, '0')}`,
        i % 50,
      ),
    )
    const whole = shape(buildCallTree(calls))

    for (const seed of [1, 2, 3]) {
      // Act: shuffled, in pages of 100, checked after every page
      const order = shuffled(calls, seed)
      const forest = new CallForest()
      for (let i = 0; i < order.length; i += 100) {
        forest.add(order.slice(i, i + 100))
        const rows = visibleRows(forest.roots, new Set())
        const arrived = new Set(order.slice(0, i + 100).map((c) => c.id))

        // Assess: every call that arrived shows once; exactly those whose parent has not arrived are orphans
        expect(rows).toHaveLength(arrived.size)
        expect(new Set(rows.map((r) => r.node.call.id)).size).toBe(arrived.size)
        for (const r of rows) {
          const parent = r.node.call.parent_id
          expect(r.node.orphan).toBe(Boolean(parent) && !arrived.has(parent as string))
        }
      }
      expect(shape(forest.roots)).toEqual(whole)
    }
  })

  it('keeps a parent cycle split across pages reachable', () => {
    // Prepare
    const forest = new CallForest()

    // Act
    forest.add([call('x', 'y', 0)])
    forest.add([call('y', 'x', 1), call('z', 'z', 2)])

    // Assess
    expect(shape(forest.roots)).toEqual(['0:x?', '1:y', '0:z'])
  })
})

describe('visibleRows', () => {
  const roots = buildCallTree([
    call('r', null, 0, 10),
    call('a', 'r', 1),
    call('a1', 'a', 2),
    call('b', 'r', 3),
    call('r2', null, 20),
  ])

  it('lists calls depth-first with their depth', () => {
    const rows = visibleRows(roots, new Set())
    expect(rows.map((r) => [r.node.call.id, r.depth])).toEqual([
      ['r', 0],
      ['a', 1],
      ['a1', 2],
      ['b', 1],
      ['r2', 0],
    ])
    expect(rows.every((r) => r.expanded)).toBe(true)
  })

  it('hides the descendants of collapsed calls', () => {
    const rows = visibleRows(roots, new Set(['a']))
    expect(rows.map((r) => r.node.call.id)).toEqual(['r', 'a', 'b', 'r2'])
    expect(rows[1]?.expanded).toBe(false)
    expect(visibleRows(roots, new Set(['r'])).map((r) => r.node.call.id)).toEqual(['r', 'r2'])
  })
})

describe('depthMarks', () => {
  it('indents one step per level up to the cap, then keeps the deepest indent and numbers the level', () => {
    // Act
    const marks = [0, 1, INDENT_LEVELS - 1, INDENT_LEVELS, 24, 40, 299, 9_999].map(depthMarks)

    // Assess: a 300-deep chain's rows keep room for their names and still tell their depth apart
    expect(INDENT_LEVELS).toBe(8)
    expect(marks).toEqual([
      { indent: 0, level: undefined },
      { indent: 1, level: undefined },
      { indent: 7, level: undefined },
      { indent: 8, level: 9 },
      { indent: 8, level: 25 },
      { indent: 8, level: 41 },
      { indent: 8, level: 300 },
      { indent: 8, level: 10_000 },
    ])
  })
})

describe('timeline', () => {
  it('spans the earliest start to the latest end, running calls up to now', () => {
    const now = Date.parse(at(100))
    const bounds = timelineBounds([call('a', null, 10, 20), call('b', 'a', 15, null)], now)
    expect(bounds).toEqual({ start: Date.parse(at(10)), end: now })
  })

  it('places bars as fractions of the whole, with a minimum width', () => {
    const now = Date.parse(at(100))
    const bounds = { start: Date.parse(at(0)), end: Date.parse(at(100)) }
    expect(barOf(call('a', null, 25, 75), bounds, now)).toEqual({ offset: 0.25, width: 0.5, running: false })
    expect(barOf(call('z', null, 50, 50), bounds, now).width).toBe(0.002)
    expect(barOf(call('r', null, 90, null), bounds, now)).toEqual({
      offset: 0.9,
      width: expect.closeTo(0.1, 10),
      running: true,
    })
  })

  it('handles an empty trace', () => {
    expect(timelineBounds([], 5)).toEqual({ start: 5, end: 5 })
  })
})
