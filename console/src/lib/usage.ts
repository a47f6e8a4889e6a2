// The trace view's token and cost roll-up: `trace/usage` per model, as its table shows it.

// A `.js` path: the root tsconfig (NodeNext) checks this file too, through the unit tests that import it.
import { totalCost } from './calls.js'

/**
 * One model's usage in a `trace/usage` answer (`call_usage[<call id>][<model>]`, shared/schemas/call-response.ts):
 * counts, and with `include_costs` a `*_total_cost` per count (null without it).
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
 * The usage table of one call's roll-up: a row per model, its cost the sum of every `*_total_cost` (`totalCost`, the
 * Traces table's rule), and whether the cache columns have anything to show (the API answers 0 for models without
 * cached tokens, so most tables leave them out).
 */
export function usageTable(usage: Readonly<Record<string, ModelUsage>>): {
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
