import { readFile } from 'node:fs/promises'
import { config } from '#shared/config'
import { listPriceRows } from '#shared/db/cost-repository'
import { misconfigured } from '#shared/errors/http-error'
import { parseJsonFile } from '#shared/json-file'
import type { PriceRow } from '#shared/schemas/cost'
import type { LoadedCall } from '#shared/tracing/call-view'
import { renderDatetime } from '#shared/tracing/time'

// The default price table, read as data on first use (never bundled into the function's JavaScript): beside this
// module in the sources, beside the bundle (`index.mjs`) in a deployed function, where CDK's bundling hook copies it
// (infra/prices-bundling.ts). `LOOM_PRICES_FILE` names a replacement in the same format.
const BUNDLED_TABLE = new URL('./default-prices.json', import.meta.url)

/** A price table file (`npm run prices:update` writes `default-prices.json`; docs/data-model.md "Default prices"). */
type PriceTableFile = { effective_date?: unknown; rows?: unknown }

const isPrice = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0

/** Storage form (`YYYY-MM-DDTHH:MM:SS.000000Z`) of a table date (UTC `YYYY-MM-DD HH:MM:SS`, as the reference's). */
function storedDate(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d$/.test(value)) return undefined
  const ms = Date.parse(`${value.replace(' ', 'T')}Z`)
  return Number.isNaN(ms) ? undefined : `${new Date(ms).toISOString().slice(0, 19)}.000000Z`
}

/**
 * Parses a price table: `{effective_date, rows: [[llm_id, provider_id, prompt, completion, cache_read?,
 * cache_creation?, effective_date?]]}` (USD per token, dates UTC `YYYY-MM-DD HH:MM:SS`) into default price rows by
 * model. Throws naming the first bad row, so a broken table fails loudly instead of pricing calls at 0.
 */
export function parsePriceTable(table: unknown, source = 'price table'): Map<string, PriceRow[]> {
  const t = (typeof table === 'object' && table !== null ? table : {}) as PriceTableFile
  const common = storedDate(t.effective_date)
  if (common === undefined || !Array.isArray(t.rows)) {
    throw new Error(`${source}: expected {effective_date: "YYYY-MM-DD HH:MM:SS", rows: [...]}`)
  }
  const byModel = new Map<string, PriceRow[]>()
  // A few hundred distinct dates among thousands of rows: each is converted once.
  const dates = new Map<unknown, string | undefined>()
  const dateOf = (date: unknown): string | undefined => {
    if (!dates.has(date)) dates.set(date, storedDate(date))
    return dates.get(date)
  }
  t.rows.forEach((row: unknown, index) => {
    const [llmId, provider, prompt, completion, cacheRead = 0, cacheCreation = 0, date] = Array.isArray(row) ? row : []
    const effective = date === undefined ? common : dateOf(date)
    const valid =
      typeof llmId === 'string' &&
      llmId !== '' &&
      typeof provider === 'string' &&
      [prompt, completion, cacheRead, cacheCreation].every(isPrice) &&
      effective !== undefined
    if (!valid) throw new Error(`${source}: bad row ${index}: ${JSON.stringify(row)}`)
    const list = byModel.get(llmId) ?? []
    list.push({
      id: `default-${llmId}-${effective.slice(0, 19)}`,
      llm_id: llmId,
      prompt_token_cost: prompt as number,
      completion_token_cost: completion as number,
      cache_read_input_token_cost: cacheRead as number,
      cache_creation_input_token_cost: cacheCreation as number,
      prompt_token_cost_unit: 'USD',
      completion_token_cost_unit: 'USD',
      effective_date: effective,
      provider_id: provider,
      pricing_level: 'default',
      pricing_level_id: 'default',
      created_at: effective,
      created_by: 'system',
    })
    byModel.set(llmId, list)
  })
  return byModel
}

/**
 * Reads and parses a price table file (`parsePriceTable`), `source` naming it in errors: throws the read error (its
 * `code`), a `JsonSyntaxError` giving the line and column (never the file's text), or the first bad row.
 */
export async function readPriceTable(file: string | URL, source: string): Promise<Map<string, PriceRow[]>> {
  return parsePriceTable(parseJsonFile(await readFile(file, 'utf8'), source), source)
}

let defaults: Promise<Map<string, PriceRow[]>> | undefined

/** The default prices by model, read and parsed once per process; a failed read is retried by the next request. */
function defaultPrices(): Promise<Map<string, PriceRow[]>> {
  defaults ??= (async () => {
    const file = config.tracing.pricesFile ?? BUNDLED_TABLE
    const source = typeof file === 'string' ? file : 'default-prices.json'
    try {
      return await readPriceTable(file, source)
    } catch (error) {
      defaults = undefined
      // A 503 that says why rather than a bare 500, as for a bad LOOM_MODELS_FILE (`npm start` refuses both at
      // start). The answer names the variable, not the path or the file's rows; the logged cause has both.
      const what = typeof file === 'string' ? 'LOOM_PRICES_FILE' : 'the bundled default-prices.json'
      throw misconfigured(`The price table is misconfigured: ${what} cannot be loaded`, {
        cause: error,
      })
    }
  })()
  return defaults
}

/** A project's prices and the default prices, by model. */
export type PriceBook = { forModel(llmId: string): readonly PriceRow[] }

/** A project's prices plus the defaults, loaded once per request (the defaults once per process). */
export async function loadPrices(project: string): Promise<PriceBook> {
  const [rows, table] = await Promise.all([listPriceRows(project), defaultPrices()])
  const own = new Map<string, PriceRow[]>()
  for (const row of rows) own.set(row.llm_id, [...(own.get(row.llm_id) ?? []), row])
  return { forModel: (llmId) => [...(own.get(llmId) ?? []), ...(table.get(llmId) ?? [])] }
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

/** `summary.weave.costs` of a call (docs/tracing.md §7.5): one `LLMCostSchema` per priced model of `summary.usage`. */
export function callCosts(call: LoadedCall, prices: PriceBook): Record<string, unknown> {
  const usage = call.summary.usage
  const out: Record<string, unknown> = {}
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return out
  for (const [llmId, raw] of Object.entries(usage)) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) continue
    const price = choosePrice(prices.forModel(llmId), llmId, call.started_at)
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
