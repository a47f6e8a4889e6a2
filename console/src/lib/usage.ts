// The tokens and cost of calls and traces, each LLM request counted once, and the trace view's table of them.
//
// A call's `summary.usage` is what its client recorded, and clients disagree on what that is. The Weave SDKs (JS and
// Python) add every child's usage into its parent's summary, so a parent's figure already holds its children's; an
// integration that wraps a client twice (an OpenAI client instrumented on import and wrapped again) records one request
// in two nested calls. OpenTelemetry spans and the gateway's own traces record only their own request. Summing every
// call's summary (what `trace/usage` does, as Weave's server does) counts an SDK trace's requests once per ancestor;
// taking the root's summary misses every request of a trace whose root records none (OpenTelemetry).
//
// The rule here: a call's usage of a model counts only when no call below it carries usage of that model. Below a call
// with usage, either its children's usage is already in its own (SDK roll-up) or it recorded the same request again
// (double instrumentation), so the deepest calls that carry a model's usage hold every request once. An SDK trace then
// totals to its leaves' requests, an OpenTelemetry trace to the sum of its spans, a gateway completion to itself.

// A `.js` path: the root tsconfig (NodeNext) checks this file too, through the unit tests that import it.
import { isRecord, readUsageCounts, USAGE_COSTS, USAGE_COUNTS } from '../../../shared/tracing/usage-counts.js'
import { type Call, totalCost } from './calls.js'

/**
 * One model's usage (the shape of `trace/usage`'s `call_usage[<call id>][<model>]`, shared/schemas/call-response.ts):
 * counts, and a `*_total_cost` per count (null without a price).
 */
export type ModelUsage = {
  requests: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  cache_read_input_tokens?: number
  cache_creation_input_tokens?: number
  prompt_tokens_total_cost?: number | null
  completion_tokens_total_cost?: number | null
  cache_read_input_tokens_total_cost?: number | null
  cache_creation_input_tokens_total_cost?: number | null
}

/** Usage per model. */
export type Usage = Record<string, ModelUsage>

/**
 * The usage a call's summary records, per model, read as `trace/usage` reads a call's own usage (docs/tracing.md §14.2
 * step 2: prompt = `prompt_tokens + input_tokens`, completion = `completion_tokens + output_tokens`, total = their sum
 * when `total_tokens` is 0), with the costs of `summary.weave.costs` (`include_costs`). Models with nothing are left out.
 */
export function recordedUsage(summary: Call['summary']): Usage {
  const usage = summary?.usage
  const out: Usage = {}
  if (!isRecord(usage)) return out
  const weave = isRecord(summary?.weave) ? summary.weave : {}
  const costs = isRecord(weave.costs) ? weave.costs : {}
  for (const [model, raw] of Object.entries(usage)) {
    if (!isRecord(raw)) continue
    const entry: ModelUsage = readUsageCounts(raw)
    const cost = isRecord(costs[model]) ? costs[model] : {}
    for (const k of USAGE_COSTS) entry[k] = typeof cost[k] === 'number' ? cost[k] : null
    if (USAGE_COUNTS.some((k) => (entry[k] ?? 0) !== 0) || USAGE_COSTS.some((k) => (entry[k] ?? 0) !== 0))
      out[model] = entry
  }
  return out
}

function add(target: Usage, source: Usage): void {
  for (const [model, u] of Object.entries(source)) {
    const t = target[model]
    if (t === undefined) {
      target[model] = { ...u }
      continue
    }
    for (const k of USAGE_COUNTS) t[k] = (t[k] ?? 0) + (u[k] ?? 0)
    for (const k of USAGE_COSTS) t[k] = t[k] == null && u[k] == null ? null : (t[k] ?? 0) + (u[k] ?? 0)
  }
}

/**
 * The usage of each call together with every call below it, each request counted once (the rule at the top of this
 * file): per model, a call's recorded usage counts only when no call below it has usage of that model; otherwise its
 * figure is the sum of its children's. Calls whose parent is not among `calls` are roots, as in the trace view.
 */
export function countedUsage(calls: readonly Pick<Call, 'id' | 'parent_id' | 'summary'>[]): Map<string, Usage> {
  const byId = new Map(calls.map((c) => [c.id, c]))
  const children = new Map<string, string[]>()
  for (const c of calls) {
    const parent = c.parent_id
    if (parent === null || parent === undefined || parent === c.id || !byId.has(parent)) continue
    const siblings = children.get(parent)
    if (siblings === undefined) children.set(parent, [c.id])
    else siblings.push(c.id)
  }
  const totals = new Map<string, Usage>()
  const started = new Set<string>()
  // Iterative post-order: a 10,000-deep chain cannot overflow the stack. A call met again while its own subtree is
  // being counted (a parent cycle, which stored data can hold) is skipped, so every call counts once.
  for (const c of calls) {
    const stack: [string, boolean][] = [[c.id, false]]
    while (stack.length > 0) {
      const [id, expanded] = stack.pop() as [string, boolean]
      if (!expanded) {
        if (started.has(id)) continue
        started.add(id)
        stack.push([id, true])
        for (const child of children.get(id) ?? []) if (!started.has(child)) stack.push([child, false])
        continue
      }
      const below: Usage = {}
      for (const child of children.get(id) ?? []) add(below, totals.get(child) ?? {})
      const total: Usage = below
      for (const [model, u] of Object.entries(recordedUsage(byId.get(id)?.summary))) {
        if (total[model] === undefined) total[model] = u
      }
      totals.set(id, total)
    }
  }
  return totals
}

/**
 * The tokens and cost of a Traces page's rows: `byCall` counts every call of the rows' traces (each row's call with
 * every call below it); `known` holds the traces read to their end, whose rows have a figure.
 */
export type PageUsage = { byCall: Map<string, Usage>; known: Set<string> }

/**
 * Counts the calls read for a page's traces (`traceIds`, in the order they were asked for). An answer of `cap` calls
 * was cut short: the server reads one trace after another (`traceUsageRequest`), so every trace it reached is whole
 * but the last one, and the traces it never reached are not known.
 */
export function pageUsage(
  traceIds: readonly string[],
  calls: readonly Pick<Call, 'id' | 'parent_id' | 'trace_id' | 'summary'>[],
  cap: number,
): PageUsage {
  const known = new Set(traceIds)
  if (calls.length >= cap) {
    const reached = new Set(calls.map((c) => c.trace_id))
    const last = calls.at(-1)?.trace_id
    for (const t of traceIds) if (!reached.has(t) || t === last) known.delete(t)
  }
  return { byCall: countedUsage(calls), known }
}

/** A row's tokens and cost, undefined while they are read or when its trace was not read to its end. */
export function rowUsage(usage: PageUsage | undefined, call: Pick<Call, 'id' | 'trace_id'>): Usage | undefined {
  if (usage === undefined || !usage.known.has(call.trace_id)) return undefined
  return usage.byCall.get(call.id) ?? {}
}

/** Total tokens over the models of a usage (`total_tokens` each), or null without any model. */
export function usageTokens(usage: Usage | undefined): number | null {
  const models = Object.values(usage ?? {})
  return models.length === 0 ? null : models.reduce((sum, u) => sum + u.total_tokens, 0)
}

/** Total cost over the models of a usage (every `*_total_cost`, `totalCost`), or null without a price. */
export function usageCost(usage: Usage | undefined): number | null {
  let total: number | null = null
  for (const u of Object.values(usage ?? {})) {
    const cost = totalCost(u)
    if (cost !== null) total = (total ?? 0) + cost
  }
  return total
}

/** A row of the usage table: one model's counts and its cost. */
export type UsageTableRow = {
  model: string
  requests: number
  prompt: number
  completion: number
  cacheRead: number
  cacheCreation: number
  total: number
  cost: number | null
}

/**
 * The usage table of one root: a row per model, its cost the sum of every `*_total_cost` (`totalCost`, the Traces
 * table's rule), and whether the cache columns have anything to show (most models have no cached tokens, so most
 * tables leave them out).
 */
export function usageTable(usage: Readonly<Usage>): {
  rows: UsageTableRow[]
  cacheRead: boolean
  cacheCreation: boolean
} {
  const rows = Object.entries(usage).map(([model, u]) => ({
    model,
    requests: u.requests,
    prompt: u.prompt_tokens,
    completion: u.completion_tokens,
    cacheRead: u.cache_read_input_tokens ?? 0,
    cacheCreation: u.cache_creation_input_tokens ?? 0,
    total: u.total_tokens,
    cost: totalCost(u),
  }))
  const has = (count: keyof ModelUsage, cost: keyof ModelUsage) =>
    Object.values(usage).some((u) => (u[count] ?? 0) !== 0 || (u[cost] ?? 0) !== 0)
  return {
    rows,
    cacheRead: has('cache_read_input_tokens', 'cache_read_input_tokens_total_cost'),
    cacheCreation: has('cache_creation_input_tokens', 'cache_creation_input_tokens_total_cost'),
  }
}
