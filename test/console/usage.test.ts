import { describe, expect, it } from 'vitest'
import type { Call } from '../../console/src/lib/calls.js'
import {
  countedUsage,
  type ModelUsage,
  pageUsage,
  recordedUsage,
  rowUsage,
  type Usage,
  usageCost,
  usageTable,
  usageTokens,
} from '../../console/src/lib/usage.js'

// Entries as trace/usage answers them with include_costs (shared/tracing/usage.ts): every count and every cost, 0 where
// a model has none.
const entry = (u: Partial<ModelUsage>): ModelUsage => ({
  requests: 1,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  prompt_tokens_total_cost: 0,
  completion_tokens_total_cost: 0,
  cache_read_input_tokens_total_cost: 0,
  cache_creation_input_tokens_total_cost: 0,
  ...u,
})

describe('usageTable', () => {
  it('prices a model by every *_total_cost, cached tokens included, and shows the cache columns it has', () => {
    // Prepare
    const usage = {
      'claude-x': entry({
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        cache_read_input_tokens: 3000,
        prompt_tokens_total_cost: 0.1,
        completion_tokens_total_cost: 0.04,
        cache_read_input_tokens_total_cost: 4,
      }),
    }

    // Act
    const table = usageTable(usage)

    // Assess
    expect(table.rows).toHaveLength(1)
    expect(table.rows[0]?.cost).toBeCloseTo(4.14, 12)
    expect(table.rows[0]).toMatchObject({ model: 'claude-x', prompt: 100, completion: 20, cacheRead: 3000, total: 120 })
    expect(table).toMatchObject({ cacheRead: true, cacheCreation: false })
  })

  it('leaves the cache columns out without cached tokens, and has no cost without prices', () => {
    // Act
    const table = usageTable({
      'gpt-x': entry({
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_total_cost: null,
        completion_tokens_total_cost: null,
        cache_read_input_tokens_total_cost: null,
        cache_creation_input_tokens_total_cost: null,
      }),
    })

    // Assess
    expect(table).toMatchObject({ cacheRead: false, cacheCreation: false })
    expect(table.rows[0]?.cost).toBeNull()
  })

  it('shows cache creation tokens a model was charged for', () => {
    const table = usageTable({ a: entry({}), b: entry({ cache_creation_input_tokens: 500 }) })
    expect(table).toMatchObject({ cacheRead: false, cacheCreation: true })
    expect(table.rows.map((r) => r.cacheCreation)).toEqual([0, 500])
  })
})

type Node = Pick<Call, 'id' | 'parent_id' | 'summary'>

const M = 'loom/reference-1'
// A price of 1/1000 per prompt token and 2/1000 per completion token, as `include_costs` answers it for a summary.
const PRICE = { prompt: 0.001, completion: 0.002 }

/** A call whose summary records `usage` of `model` (prompt, completion, requests), priced as the API prices it. */
function call(id: string, parent: string | null, recorded: Record<string, [number, number, number]> = {}): Node {
  const usage: Record<string, unknown> = {}
  const costs: Record<string, unknown> = {}
  for (const [model, [prompt, completion, requests]] of Object.entries(recorded)) {
    usage[model] = { requests, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
    costs[model] = {
      prompt_tokens_total_cost: prompt * PRICE.prompt,
      completion_tokens_total_cost: completion * PRICE.completion,
      cache_read_input_tokens_total_cost: 0,
      cache_creation_input_tokens_total_cost: 0,
    }
  }
  const summary = Object.keys(usage).length === 0 ? {} : { usage, weave: { status: 'success', costs } }
  return { id, parent_id: parent, summary }
}

/** What `trace/usage` answers for a call (Weave's rule): its summary plus every descendant's, summed. */
function weaveSum(calls: Node[], id: string): number {
  const own = usageTokens(recordedUsage(calls.find((c) => c.id === id)?.summary)) ?? 0
  return own + calls.filter((c) => c.parent_id === id).reduce((sum, c) => sum + weaveSum(calls, c.id), 0)
}

const counts = (u: Usage | undefined, model = M) => {
  const m = u?.[model]
  return m && { requests: m.requests, prompt: m.prompt_tokens, completion: m.completion_tokens, total: m.total_tokens }
}

describe('countedUsage', () => {
  it("totals an SDK trace, whose parents already hold their children's usage, to its root's summary", () => {
    // Prepare: the Weave SDKs add each child's usage into its parent's summary (root = step + b = a + b)
    const calls = [
      call('root', null, { [M]: [90, 18, 2] }),
      call('step', 'root', { [M]: [40, 10, 1] }),
      call('a', 'step', { [M]: [40, 10, 1] }),
      call('b', 'root', { [M]: [50, 8, 1] }),
      call('tool', 'step'),
    ]

    // Act
    const usage = countedUsage(calls)

    // Assess: the root's own summary, each request once (Weave's sum of every summary says more)
    expect(counts(usage.get('root'))).toEqual({ requests: 2, prompt: 90, completion: 18, total: 108 })
    expect(usageCost(usage.get('root'))).toBeCloseTo(90 * PRICE.prompt + 18 * PRICE.completion, 12)
    expect(counts(usage.get('step'))).toEqual({ requests: 1, prompt: 40, completion: 10, total: 50 })
    expect(weaveSum(calls, 'root')).toBe(266)
  })

  it('counts a request that a doubly instrumented client recorded in two nested calls once', () => {
    // Prepare: the QA trace (seed-weave-openai.cjs): openai instrumented on import and wrapped again, so each request
    // is an outer and an inner `openai.chat.completions.create`, the outer holding its own record plus the inner's
    const calls = [
      call('pipeline', null, { [M]: [176, 40, 4] }),
      call('outer-1', 'pipeline', { [M]: [82, 20, 2] }),
      call('inner-1', 'outer-1', { [M]: [41, 10, 1] }),
      call('outer-2', 'pipeline', { [M]: [94, 20, 2] }),
      call('inner-2', 'outer-2', { [M]: [47, 10, 1] }),
    ]

    // Act
    const usage = countedUsage(calls)

    // Assess: the two requests the gateway served, 108 tokens (the root's summary says 216, Weave's sum 540)
    expect(counts(usage.get('pipeline'))).toEqual({ requests: 2, prompt: 88, completion: 20, total: 108 })
    expect(usageTokens(usage.get('pipeline'))).toBe(108)
    expect(usageCost(usage.get('pipeline'))).toBeCloseTo(88 * PRICE.prompt + 20 * PRICE.completion, 12)
    expect(weaveSum(calls, 'pipeline')).toBe(540)
  })

  it('sums an OpenTelemetry trace, whose spans record only their own request, over its spans', () => {
    // Prepare: no roll-up: the root and the agent span record nothing, the LLM spans input/output tokens, an HTTP
    // span under one of them nothing
    const otel = (id: string, parent: string | null, input: number, output: number): Node => ({
      id,
      parent_id: parent,
      summary: { usage: { 'gpt-4o': { input_tokens: input, output_tokens: output } } },
    })
    const calls = [
      call('root', null),
      call('agent', 'root'),
      otel('llm-1', 'agent', 120, 30),
      call('http', 'llm-1'),
      otel('llm-2', 'agent', 10, 5),
    ]

    // Act
    const usage = countedUsage(calls)

    // Assess: the root's own summary has nothing, the trace 165 tokens
    expect(counts(usage.get('root'), 'gpt-4o')).toEqual({ requests: 0, prompt: 130, completion: 35, total: 165 })
    expect(usageCost(usage.get('root'))).toBeNull()
    expect(recordedUsage(calls[0]?.summary)).toEqual({})
  })

  it('counts a mixed trace once: an SDK subtree by its roll-up, an OpenTelemetry subtree by its spans', () => {
    // Prepare: the SDK root rolled up its SDK child only; the spans below it were not rolled into anything
    const calls = [
      call('root', null, { [M]: [41, 10, 1] }),
      call('sdk-create', 'root', { [M]: [41, 10, 1] }),
      call('span', 'root'),
      call('span-llm-1', 'span', { [M]: [100, 50, 1] }),
      call('span-llm-2', 'span', { other: [7, 3, 1] }),
    ]

    // Act
    const usage = countedUsage(calls)

    // Assess: per model, each request once
    expect(counts(usage.get('root'))).toEqual({ requests: 2, prompt: 141, completion: 60, total: 201 })
    expect(counts(usage.get('root'), 'other')).toEqual({ requests: 1, prompt: 7, completion: 3, total: 10 })
    expect(usageTokens(usage.get('root'))).toBe(211)
  })

  it("counts a call's own usage of a model that no call below it records", () => {
    // Prepare: a call that recorded a request of one model and has a child with another model's
    const calls = [call('parent', null, { big: [10, 1, 1] }), call('child', 'parent', { small: [5, 1, 1] })]

    // Act
    const usage = countedUsage(calls)

    // Assess
    expect(Object.keys(usage.get('parent') ?? {}).sort()).toEqual(['big', 'small'])
    expect(usageTokens(usage.get('parent'))).toBe(17)
  })

  it('takes a call whose parent is not loaded as a root, survives a cycle and a 10,000-deep chain', () => {
    // Prepare
    const chain = Array.from({ length: 10_000 }, (_, i) =>
      call(`c${i}`, i === 0 ? null : `c${i - 1}`, { [M]: [3, 1, 1] }),
    )
    const cycle = [call('x', 'y', { [M]: [1, 1, 1] }), call('y', 'x', { [M]: [2, 2, 1] })]
    const orphan = call('orphan', 'not-loaded', { [M]: [4, 4, 1] })

    // Act
    const usage = countedUsage([...chain, ...cycle, orphan])

    // Assess: the chain's one request (every level rolled up); the cycle is walked once, from x, whose child y is the
    // deepest call with usage; the orphan alone
    expect(counts(usage.get('c0'))).toEqual({ requests: 1, prompt: 3, completion: 1, total: 4 })
    expect(usageTokens(usage.get('x'))).toBe(4)
    expect(usageTokens(usage.get('orphan'))).toBe(8)
  })
})

describe('pageUsage', () => {
  const inTrace = (trace: string, c: Node) => ({ ...c, trace_id: trace })

  it("gives every row of the page's traces its own and its descendants' usage, once", () => {
    // Prepare: a root and its child in t1, a root in t2 without usage
    const calls = [
      inTrace('t1', call('r1', null, { [M]: [10, 2, 1] })),
      inTrace('t1', call('c1', 'r1', { [M]: [10, 2, 1] })),
      inTrace('t2', call('r2', null)),
    ]

    // Act
    const usage = pageUsage(['t1', 't2'], calls, 100)

    // Assess: rows of both traces have a figure; a call without usage has none ('—')
    expect(usageTokens(rowUsage(usage, { id: 'r1', trace_id: 't1' }))).toBe(12)
    expect(usageTokens(rowUsage(usage, { id: 'c1', trace_id: 't1' }))).toBe(12)
    expect(rowUsage(usage, { id: 'r2', trace_id: 't2' })).toEqual({})
    expect(rowUsage(undefined, { id: 'r1', trace_id: 't1' })).toBeUndefined()
  })

  it('gives no figure to the traces a capped answer did not read whole: the last one reached and those after it', () => {
    // Prepare: the cap (3 calls) reached inside t2; t3 never read
    const calls = [
      inTrace('t1', call('r1', null, { [M]: [1, 1, 1] })),
      inTrace('t2', call('r2', null, { [M]: [2, 1, 1] })),
      inTrace('t2', call('c2', 'r2', { [M]: [2, 1, 1] })),
    ]

    // Act
    const usage = pageUsage(['t1', 't2', 't3'], calls, 3)

    // Assess
    expect(usageTokens(rowUsage(usage, { id: 'r1', trace_id: 't1' }))).toBe(2)
    expect(rowUsage(usage, { id: 'r2', trace_id: 't2' })).toBeUndefined()
    expect(rowUsage(usage, { id: 'r3', trace_id: 't3' })).toBeUndefined()
  })
})

describe('recordedUsage', () => {
  it("reads a summary as trace/usage reads a call's own usage, with its costs", () => {
    // Act
    const usage = recordedUsage({
      usage: {
        a: { prompt_tokens: 10, input_tokens: 2, completion_tokens: '5', output_tokens: 1.9, requests: 1 },
        b: { total_tokens: 0, prompt_tokens: 0 },
        c: 'not an object',
      },
      weave: { costs: { a: { prompt_tokens_total_cost: 0.5, completion_tokens_total_cost: 0.25 } } },
    })

    // Assess: prompt + input, completion + output (ints as Python reads them), total their sum; nothing-only models out
    expect(Object.keys(usage)).toEqual(['a'])
    expect(usage.a).toMatchObject({ requests: 1, prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 })
    expect(usageCost(usage)).toBeCloseTo(0.75, 12)
    expect(usageTokens({})).toBeNull()
    expect(usageCost(recordedUsage({ usage: { m: { total_tokens: 3 } } }))).toBeNull()
  })
})
