/**
 * `npm run prices:update -- <source.json>[@<date>] … [--source <provenance>] [--fresh]`: merges price files into
 * `shared/tracing/default-prices.json`, the default price table tracing uses when a project has no price of its own
 * (format and provenance: docs/data-model.md, "Default prices").
 *
 * Reads either of two public formats:
 * - LiteLLM's `model_prices_and_context_window.json` (what the reference's `weave/trace_server/costs/update_costs.py`
 *   fetches): every entry with both `input_cost_per_token` and `output_cost_per_token` is one price, dated `@<date>`
 *   (default: now, as the reference dates a fetched price);
 * - a Weave `cost_checkpoint.json` (`{llm_id: [{provider, input, output, created_at}]}`): every dated entry.
 * The merge follows the reference's update rule: a model's price is appended only when it differs from the model's
 * newest row, at most three rows are kept per model (the oldest goes), models missing from a source keep their rows.
 * Files are merged in the order given, so replaying dated snapshots oldest first builds the price history.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

/** `[llm_id, provider_id, prompt, completion, cache_read_input, cache_creation_input, effective_date]`, USD/token. */
type Row = [string, string, number, number, number, number, string]
type Table = { source: string[]; rows: Map<string, Row[]> }

const OUT = join(import.meta.dirname, '../shared/tracing/default-prices.json')
const HISTORY = 3
const FORMAT = '[llm_id, provider_id, prompt, completion, cache_read_input, cache_creation_input, effective_date?]'

const num = (v: unknown): number => {
  const n = typeof v === 'number' ? v : Number(v ?? 0)
  return Number.isFinite(n) && n >= 0 ? n : 0
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the reference's `created_at` form. */
function tableDate(value: string | Date): string {
  const d = value instanceof Date ? value : new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`)
  if (Number.isNaN(d.getTime())) throw new Error(`not a date: ${String(value)}`)
  return d.toISOString().replace('T', ' ').slice(0, 19)
}

async function readTable(fresh: boolean): Promise<Table> {
  const rows = new Map<string, Row[]>()
  if (fresh) return { source: [], rows }
  const data = JSON.parse(await readFile(OUT, 'utf8')) as {
    source: string[]
    effective_date: string
    rows: unknown[][]
  }
  for (const r of data.rows) {
    const row = [...r.slice(0, 6), r[6] ?? data.effective_date] as Row
    rows.set(row[0], [...(rows.get(row[0]) ?? []), row])
  }
  return { source: data.source, rows }
}

function pricesOf(file: Record<string, unknown>, date: string): Row[] {
  const out: Row[] = []
  for (const [llmId, raw] of Object.entries(file)) {
    if (Array.isArray(raw)) {
      for (const e of raw as Record<string, unknown>[]) {
        out.push([
          llmId,
          String(e.provider ?? 'default'),
          num(e.input),
          num(e.output),
          0,
          0,
          tableDate(String(e.created_at)),
        ])
      }
      continue
    }
    if (llmId === 'sample_spec' || typeof raw !== 'object' || raw === null) continue
    const e = raw as Record<string, unknown>
    if (!('input_cost_per_token' in e) || !('output_cost_per_token' in e)) continue
    out.push([
      llmId,
      String(e.litellm_provider ?? 'default'),
      num(e.input_cost_per_token),
      num(e.output_cost_per_token),
      num(e.cache_read_input_token_cost),
      num(e.cache_creation_input_token_cost),
      date,
    ])
  }
  return out.sort((a, b) => (a[6] < b[6] ? -1 : a[6] > b[6] ? 1 : 0))
}

/** The reference's rule: append when the price changed, keep the newest `HISTORY` rows. Returns whether it changed. */
function merge(table: Table, row: Row): boolean {
  const rows = table.rows.get(row[0])
  if (rows === undefined) {
    table.rows.set(row[0], [row])
    return true
  }
  const last = rows.at(-1) as Row
  if (last[2] === row[2] && last[3] === row[3] && last[4] === row[4] && last[5] === row[5]) return false
  if (row[6] <= last[6]) return false
  rows.push(row)
  if (rows.length > HISTORY) rows.shift()
  return true
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { source: { type: 'string', multiple: true }, fresh: { type: 'boolean', default: false } },
  })
  if (positionals.length === 0) throw new Error('usage: npm run prices:update -- <file.json>[@date] … [--source text]')
  const table = await readTable(values.fresh === true)
  let changed = 0
  for (const arg of positionals) {
    const at = arg.lastIndexOf('@')
    const [file, date] = at > 0 ? [arg.slice(0, at), tableDate(arg.slice(at + 1))] : [arg, tableDate(new Date())]
    const data = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    for (const row of pricesOf(data, date)) if (merge(table, row)) changed += 1
  }
  for (const s of values.source ?? []) if (!table.source.includes(s)) table.source.push(s)
  const rows = [...table.rows.keys()].sort().flatMap((k) => table.rows.get(k) as Row[])
  // The most common date is written once; rows with another date carry it as a seventh element.
  const counts = new Map<string, number>()
  for (const r of rows) counts.set(r[6], (counts.get(r[6]) ?? 0) + 1)
  const common = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? tableDate(new Date())
  const header = {
    generated: 'by npm run prices:update (scripts/update-prices.ts); do not edit by hand',
    source: table.source,
    format: `${FORMAT} USD per token; effective_date is UTC, default the one below`,
    updated_at: tableDate(new Date()),
    effective_date: common,
  }
  const lines = rows.map((r) => JSON.stringify(r[6] === common ? r.slice(0, 6) : r))
  const head = JSON.stringify(header, null, 2).slice(0, -2)
  await writeFile(OUT, `${head},\n  "rows": [\n    ${lines.join(',\n    ')}\n  ]\n}\n`)
  console.log(`${changed} prices changed; ${rows.length} prices of ${table.rows.size} models in ${OUT}`)
}

await main()
