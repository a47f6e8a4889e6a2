import { createHash } from 'node:crypto'
import * as z from 'zod/mini'
import { deletePriceRows, listPriceRows, putPriceRows } from '#shared/db/cost-repository'
import { claimRetryValue } from '#shared/db/retry-key-repository'
import { BadRequestError } from '#shared/errors/http-error'
import type { CostCreateReq, CostQueryReq, PriceRow } from '#shared/schemas/cost'
import type { Operand, Query } from '#shared/schemas/query'
import { compareKeys, sortKey } from '#shared/tracing/call-fields'
import { uuidv7 } from '#shared/tracing/ids'
import { matches, queryFields } from '#shared/tracing/query-eval'
import type { Val } from '#shared/tracing/query-values'
import { microsToStored, renderDatetime, storedToMicros, toStoredDatetime } from '#shared/tracing/time'

const RESULT_FIELDS = [
  'id',
  'llm_id',
  'prompt_token_cost',
  'completion_token_cost',
  'cache_read_input_token_cost',
  'cache_creation_input_token_cost',
  'prompt_token_cost_unit',
  'completion_token_cost_unit',
  'effective_date',
  'provider_id',
] as const
const DATE_FIELDS = new Set(['effective_date', 'created_at'])
// The price table's columns (Weave's `llm_token_prices`): what `fields`, `query` and `sort_by` may name.
const COLUMNS = new Set<string>([...RESULT_FIELDS, 'pricing_level', 'pricing_level_id', 'created_at', 'created_by'])

const CostRetrySchema = z.object({ created_at: z.string(), ids: z.array(z.string()) })

/**
 * `cost/create`: stores project-level prices; returns `[llm_id, cost_id]` pairs in request order. Ids are generated;
 * a retry carrying the first attempt's `X-Weave-Retry-Id` reuses its ids and creation time, so it rewrites the same
 * rows instead of adding duplicates (without a retry id every request adds rows, as price history requires).
 */
export async function createCosts(
  req: CostCreateReq,
  userId: string,
  retryKey?: string,
  now = Date.now(),
): Promise<{ ids: [string, string][] }> {
  const entries = Object.entries(req.costs)
  let first = { created_at: microsToStored(now * 1000), ids: entries.map(() => uuidv7(now)) }
  if (retryKey !== undefined) {
    const request = createHash('sha256').update(JSON.stringify(req)).digest('base64url')
    first = await claimRetryValue('cost', req.project_id, retryKey, first, CostRetrySchema, request)
  }
  const createdAt = first.created_at
  const rows: PriceRow[] = entries.map(([llmId, c], i) => {
    const effective =
      c.effective_date === null || c.effective_date === undefined ? createdAt : toStoredDatetime(c.effective_date)
    if (effective === undefined) throw new BadRequestError(`Invalid effective_date for ${llmId}`)
    return {
      id: first.ids[i] ?? uuidv7(now),
      llm_id: llmId,
      prompt_token_cost: c.prompt_token_cost,
      completion_token_cost: c.completion_token_cost,
      cache_read_input_token_cost: c.cache_read_input_token_cost,
      cache_creation_input_token_cost: c.cache_creation_input_token_cost,
      prompt_token_cost_unit: c.prompt_token_cost_unit ?? 'USD',
      completion_token_cost_unit: c.completion_token_cost_unit ?? 'USD',
      effective_date: effective,
      provider_id: c.provider_id ?? 'default',
      pricing_level: 'project',
      pricing_level_id: req.project_id,
      created_at: createdAt,
      created_by: userId,
    }
  })
  await putPriceRows(req.project_id, rows)
  return { ids: rows.map((r) => [r.llm_id, r.id]) }
}

function rowField(row: PriceRow, path: string): Val {
  const v = (row as Record<string, unknown>)[path]
  if (DATE_FIELDS.has(path)) return { t: 'date', v: storedToMicros(v as string) }
  return { t: 'plain', v }
}

/**
 * Refuses what the reference's ORM refuses before running a query (orm.py `Select.prepare`, `limit`, `offset`): a
 * field that is not a column of the price table, in `fields`, `query` or `sort_by`, and a negative limit or offset.
 */
function assertCostQuery(req: CostQueryReq): void {
  const named = [...(req.fields ?? []), ...(req.sort_by ?? []).map((s) => s.field)]
  if (req.query) queryFields(req.query.expr, named)
  const unknown = named.find((f) => !COLUMNS.has(f))
  if (unknown !== undefined) throw new BadRequestError(`Unknown field: ${unknown}`)
  if ((req.limit ?? 0) < 0) throw new BadRequestError('Limit must be non-negative')
  if ((req.offset ?? 0) < 0) throw new BadRequestError('Offset must be non-negative')
}

/** `cost/query`: the project's own prices, filtered, sorted, paged and projected to `fields`. */
export async function queryCosts(req: CostQueryReq): Promise<{ results: Record<string, unknown>[] }> {
  assertCostQuery(req)
  let rows = await listPriceRows(req.project_id)
  const query = req.query
  if (query) rows = rows.filter((row) => matches(query, (path) => rowField(row, path)))
  const sortBy = req.sort_by ?? []
  if (sortBy.length > 0) {
    rows.sort((a, b) => {
      for (const s of sortBy) {
        const c = compareKeys(sortKey(rowField(a, s.field)), sortKey(rowField(b, s.field)), s.direction === 'desc')
        if (c !== 0) return c
      }
      return 0
    })
  }
  const offset = req.offset ?? 0
  rows = rows.slice(offset, req.limit === null || req.limit === undefined ? undefined : offset + req.limit)
  const fields = req.fields && req.fields.length > 0 ? req.fields : RESULT_FIELDS
  const allowed = new Set<string>(RESULT_FIELDS)
  return {
    results: rows.map((row) =>
      Object.fromEntries(
        fields
          .filter((f) => allowed.has(f))
          .map((f) => [
            f,
            f === 'effective_date' ? renderDatetime(row.effective_date) : (row as Record<string, unknown>)[f],
          ]),
      ),
    ),
  }
}

const PURGE_ERROR = 'Can only purge costs by specifying one or more cost ids'

function idLiteral(a: Operand, b: Operand): string | undefined {
  const [field, lit] = a.k === 'get' ? [a, b] : [b, a]
  if (field.k !== 'get' || field.path !== 'id' || lit.k !== 'lit' || typeof lit.v !== 'string') return undefined
  return lit.v
}

function purgeIds(query: Query): string[] {
  const expr = query.expr
  if (expr.k === 'cmp' && expr.op === 'eq') {
    const id = idLiteral(expr.a, expr.b)
    if (id !== undefined) return [id]
  }
  if (expr.k === 'in' && expr.a.k === 'get' && expr.a.path === 'id') {
    const ids = expr.list.map((o) => (o.k === 'lit' && typeof o.v === 'string' ? o.v : undefined))
    if (ids.every((id) => id !== undefined)) return ids as string[]
  }
  if (expr.k === 'or') {
    const ids = expr.ops.map((o) => (o.k === 'cmp' && o.op === 'eq' ? idLiteral(o.a, o.b) : undefined))
    if (ids.every((id) => id !== undefined)) return ids as string[]
  }
  throw new BadRequestError(PURGE_ERROR)
}

/** `cost/purge`: deletes project prices by id; any other query is a 400. */
export async function purgeCosts(project: string, query: Query): Promise<void> {
  await deletePriceRows(project, purgeIds(query))
}
