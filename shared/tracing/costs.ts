import { listPriceRows } from '#shared/db/cost-repository'
import type { PriceRow } from '#shared/schemas/cost'
import type { LoadedCall } from '#shared/tracing/call-view'
import { renderDatetime } from '#shared/tracing/time'

const DEFAULT_DATE = '2024-01-01T00:00:00.000000Z'

function defaultPrice(llmId: string, prompt: number, completion: number, provider: string): PriceRow {
  return {
    id: `default-${llmId}`,
    llm_id: llmId,
    prompt_token_cost: prompt,
    completion_token_cost: completion,
    cache_read_input_token_cost: 0,
    cache_creation_input_token_cost: 0,
    prompt_token_cost_unit: 'USD',
    completion_token_cost_unit: 'USD',
    effective_date: DEFAULT_DATE,
    provider_id: provider,
    pricing_level: 'default',
    pricing_level_id: 'default',
    created_at: DEFAULT_DATE,
    created_by: 'system',
  }
}

/** The server-seeded default prices (USD per token), used when a project has no price of its own for a model. */
export const DEFAULT_PRICES: readonly PriceRow[] = [
  defaultPrice('gpt-4', 3e-5, 6e-5, 'openai'),
  defaultPrice('gpt-4o', 2.5e-6, 1e-5, 'openai'),
  defaultPrice('gpt-4o-mini', 1.5e-7, 6e-7, 'openai'),
  defaultPrice('gpt-3.5-turbo', 5e-7, 1.5e-6, 'openai'),
]

/** A project's prices plus the defaults, loaded once per request. */
export async function loadPrices(project: string): Promise<PriceRow[]> {
  return [...(await listPriceRows(project)), ...DEFAULT_PRICES]
}

const toInt = (v: unknown): number => {
  const n = typeof v === 'string' ? Number(v.trim()) : typeof v === 'number' ? v : Number.NaN
  return Number.isFinite(n) ? Math.trunc(n) : 0
}

/** Picks the price for a model at a time: (is_future, project before default, newest effective date), lowest wins. */
export function choosePrice(prices: readonly PriceRow[], llmId: string, at: string): PriceRow | undefined {
  const rank = (p: PriceRow): [number, number, string] => [
    p.effective_date > at ? 1 : 0,
    p.pricing_level === 'project' ? 0 : 1,
    p.effective_date,
  ]
  let best: PriceRow | undefined
  for (const p of prices) {
    if (p.llm_id !== llmId) continue
    if (best === undefined) {
      best = p
      continue
    }
    const [a0, a1, a2] = rank(p)
    const [b0, b1, b2] = rank(best)
    if (a0 < b0 || (a0 === b0 && (a1 < b1 || (a1 === b1 && a2 > b2)))) best = p
  }
  return best
}

/** `summary.weave.costs` of a call (§7.5): one `LLMCostSchema` per priced model of `summary.usage`. */
export function callCosts(call: LoadedCall, prices: readonly PriceRow[]): Record<string, unknown> {
  const usage = call.summary.usage
  const out: Record<string, unknown> = {}
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return out
  for (const [llmId, raw] of Object.entries(usage)) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) continue
    const price = choosePrice(prices, llmId, call.started_at)
    if (price === undefined) continue
    const u = raw as Record<string, unknown>
    const prompt = toInt(u.prompt_tokens) + toInt(u.input_tokens)
    const completion = toInt(u.completion_tokens) + toInt(u.output_tokens)
    const cacheRead = toInt(u.cache_read_input_tokens)
    const cacheCreation = toInt(u.cache_creation_input_tokens)
    out[llmId] = {
      requests: toInt(u.requests),
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: toInt(u.total_tokens),
      cache_read_input_tokens: cacheRead,
      cache_creation_input_tokens: cacheCreation,
      prompt_tokens_total_cost: (prompt - cacheRead - cacheCreation) * price.prompt_token_cost,
      completion_tokens_total_cost: completion * price.completion_token_cost,
      cache_read_input_tokens_total_cost: cacheRead * price.cache_read_input_token_cost,
      cache_creation_input_tokens_total_cost: cacheCreation * price.cache_creation_input_token_cost,
      prompt_token_cost: price.prompt_token_cost,
      completion_token_cost: price.completion_token_cost,
      cache_read_input_token_cost: price.cache_read_input_token_cost,
      cache_creation_input_token_cost: price.cache_creation_input_token_cost,
      prompt_token_cost_unit: price.prompt_token_cost_unit,
      completion_token_cost_unit: price.completion_token_cost_unit,
      effective_date: renderDatetime(price.effective_date),
      provider_id: price.provider_id,
      pricing_level: price.pricing_level,
      pricing_level_id: price.pricing_level_id,
      created_at: renderDatetime(price.created_at),
      created_by: price.created_by,
    }
  }
  return out
}
