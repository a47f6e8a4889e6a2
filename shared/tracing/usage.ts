import { getCallParts } from '#shared/db/call-repository'
import { BadRequestError, PayloadTooLargeError } from '#shared/errors/http-error'
import type { CallsUsageReq, TraceUsageReq } from '#shared/schemas/call'
import type { AggregatedUsage, UsageRes as UsageResult } from '#shared/schemas/call-response'
import { selectCalls } from '#shared/tracing/call-query'
import type { LoadedCall } from '#shared/tracing/call-view'
import { callCosts, loadPrices } from '#shared/tracing/costs'
import { isRecord, readUsageCounts, USAGE_COSTS, USAGE_COUNTS } from '#shared/tracing/usage-counts'

function toFloat(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0
}

/**
 * A call's own usage per model (docs/tracing.md §14.2 step 2); `costs` is its `summary.weave.costs` when costs were
 * requested.
 */
export function ownUsage(
  call: LoadedCall,
  costs: Record<string, unknown> | undefined,
): Record<string, AggregatedUsage> {
  const usage = call.summary.usage
  const out: Record<string, AggregatedUsage> = {}
  if (!isRecord(usage)) return out
  for (const [model, raw] of Object.entries(usage)) {
    if (!isRecord(raw)) continue
    const entry: AggregatedUsage = {
      ...readUsageCounts(raw),
      prompt_tokens_total_cost: null,
      completion_tokens_total_cost: null,
      cache_read_input_tokens_total_cost: null,
      cache_creation_input_tokens_total_cost: null,
    }
    if (costs !== undefined) {
      const cost = isRecord(costs[model]) ? (costs[model] as Record<string, unknown>) : {}
      for (const k of USAGE_COSTS) entry[k] = toFloat(cost[k])
    }
    const anyCount = USAGE_COUNTS.some((k) => entry[k] !== 0)
    const anyCost = costs !== undefined && USAGE_COSTS.some((k) => entry[k] !== 0)
    if (anyCount || anyCost) out[model] = entry
  }
  return out
}

function mergeInto(
  target: Record<string, AggregatedUsage>,
  source: Record<string, AggregatedUsage>,
  withCosts: boolean,
) {
  for (const [model, u] of Object.entries(source)) {
    const t = target[model]
    if (t === undefined) {
      target[model] = { ...u }
      continue
    }
    for (const k of USAGE_COUNTS) t[k] += u[k]
    if (withCosts) for (const k of USAGE_COSTS) t[k] = (t[k] ?? 0) + (u[k] ?? 0)
  }
}

/** Rolls usage up the selected calls (docs/tracing.md §14.2 steps 2–5): own usage plus every selected descendant's. */
export async function rollUpUsage(
  project: string,
  calls: readonly LoadedCall[],
  includeCosts: boolean,
): Promise<UsageResult> {
  const prices = includeCosts ? await loadPrices(project) : undefined
  const selected = new Set(calls.map((c) => c.id))
  const children = new Map<string, string[]>()
  const totals = new Map<string, Record<string, AggregatedUsage>>()
  for (const call of calls) {
    totals.set(call.id, ownUsage(call, prices === undefined ? undefined : callCosts(call, prices)))
    if (call.parent_id !== null && selected.has(call.parent_id) && call.parent_id !== call.id) {
      const siblings = children.get(call.parent_id)
      if (siblings === undefined) children.set(call.parent_id, [call.id])
      else siblings.push(call.id)
    }
  }
  // Iterative post-order, so a 10,000-deep chain cannot overflow the stack; each child merges into its parent once.
  const done = new Set<string>()
  for (const call of calls) {
    const stack: [string, boolean][] = [[call.id, false]]
    while (stack.length > 0) {
      const [id, expanded] = stack.pop() as [string, boolean]
      if (done.has(id)) continue
      if (!expanded) {
        stack.push([id, true])
        for (const child of children.get(id) ?? []) if (!done.has(child)) stack.push([child, false])
        continue
      }
      const total = totals.get(id) as Record<string, AggregatedUsage>
      for (const child of children.get(id) ?? []) mergeInto(total, totals.get(child) ?? {}, includeCosts)
      done.add(id)
    }
  }
  const unfinished = calls.filter((c) => c.ended_at === null).map((c) => c.id)
  return { call_usage: Object.fromEntries(totals), unfinished_call_ids: unfinished.sort() }
}

/** `trace/usage`: the selection of `calls/stream_query` (silently truncated at `limit`), rolled up. */
export async function traceUsage(req: TraceUsageReq): Promise<UsageResult> {
  const calls = await selectCalls({
    project: req.project_id,
    filter: req.filter,
    query: req.query,
    limit: req.limit,
    lean: true,
  })
  return rollUpUsage(req.project_id, calls, req.include_costs)
}

/**
 * `calls/usage`: complete usage of the requested calls, whole traces at a time, never partial (docs/tracing.md §14.3).
 */
export async function callsUsage(req: CallsUsageReq): Promise<UsageResult> {
  if (req.limit < 1) throw new BadRequestError('Usage aggregation limit must be positive')
  const ids = [...new Set(req.call_ids)]
  const callUsage: UsageResult['call_usage'] = Object.fromEntries(ids.map((id) => [id, {}]))
  if (ids.length === 0) return { call_usage: {}, unfinished_call_ids: [] }
  const parts = await getCallParts(req.project_id, ids, { parts: 'start' })
  const traceIds = [
    ...new Set([...parts.values()].flatMap((p) => (p.start && !p.start.deleted_at ? [p.start.trace_id] : []))),
  ].sort()
  const unfinished = new Set<string>()
  const pending: string[][] = traceIds.length > 0 ? [traceIds] : []
  while (pending.length > 0) {
    const batch = pending.shift() as string[]
    const calls = await selectCalls({
      project: req.project_id,
      filter: { trace_ids: batch },
      limit: req.limit + 1,
      lean: true,
    })
    if (calls.length > req.limit) {
      if (batch.length === 1) {
        throw new PayloadTooLargeError(
          `Cannot compute complete usage: a single trace exceeds the ${req.limit}-call aggregation limit. Increase limit and retry.`,
        )
      }
      const half = Math.ceil(batch.length / 2)
      pending.unshift(batch.slice(0, half), batch.slice(half))
      continue
    }
    const rolled = await rollUpUsage(req.project_id, calls, req.include_costs)
    for (const id of ids) if (rolled.call_usage[id] !== undefined) callUsage[id] = rolled.call_usage[id]
    for (const id of rolled.unfinished_call_ids) unfinished.add(id)
  }
  return { call_usage: callUsage, unfinished_call_ids: [...unfinished].sort() }
}
