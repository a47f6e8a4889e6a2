/**
 * `npm run bench:tracing:feedback [rows] [iterations]`: `POST /feedback/stats` over 100,000 feedback rows in one
 * 24-hour window, end to end through the function's app (auth, validation, the window Query, aggregation), against
 * the storage's raw ceiling measured in the same run on the same table: a plain Query that reads the same items
 * (same index, same key range, every attribute, every page) and does nothing with them. Storage is an in-process
 * dynalite, so absolute figures are for this machine only; the ratio is what the target (≤ 1.5×) is about.
 */
import type { AddressInfo } from 'node:net'
import {
  BatchWriteCommand,
  type BatchWriteCommandOutput,
  QueryCommand,
  type QueryCommandOutput,
} from '@aws-sdk/lib-dynamodb'
import dynalite from 'dynalite'
import { createApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { db, table } from '#shared/db/client'
import { ensureTable } from '#shared/db/ensure-table'
import { feedbackItem } from '#shared/db/feedback-repository'
import type { FeedbackRow } from '#shared/schemas/feedback'
import { uuidv7 } from '#shared/tracing/ids'
import { feedbackRow } from '../test/support/feedback.js'
import { writeCostLine } from './index-cost.js'

const ROWS = Number(process.argv[2] ?? 100_000)
const ITERATIONS = Number(process.argv[3] ?? 5)
const START = Date.parse('2025-03-01T00:00:00Z')
const WINDOW_MS = 24 * 3600 * 1000

let seed = 7
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}

// A scorer's feedback as monitors write it: a numeric score, a boolean verdict and a label.
function row(project: string, i: number): FeedbackRow {
  const created = START + Math.floor((i / ROWS) * WINDOW_MS)
  const payload = {
    output: { score: Math.round(rand() * 1000) / 1000, passed: rand() > 0.3, label: rand() > 0.5 ? 'good' : 'bad' },
  }
  return feedbackRow(project, new Date(created).toISOString(), payload, {
    id: uuidv7(created),
    weave_ref: `weave:///${project}/call/${uuidv7(created)}`,
    wb_user_id: 'bench-user',
    feedback_type: 'wandb.runnable.relevance',
    runnable_ref: `weave:///${project}/op/relevance:abc`,
  })
}

async function seedRows(project: string): Promise<void> {
  const items = Array.from({ length: ROWS }, (_, i) => {
    const r = row(project, i)
    return feedbackItem(r, { json: JSON.stringify(r.payload) })
  })
  const batches: Record<string, unknown>[][] = []
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25))
  // A few writers at once, as a real load would be.
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < batches.length) {
        let requests = (batches[next++] ?? []).map((Item) => ({ PutRequest: { Item } }))
        while (requests.length > 0) {
          const out: BatchWriteCommandOutput = await db().send(
            new BatchWriteCommand({ RequestItems: { [table()]: requests } }),
          )
          requests = (out.UnprocessedItems?.[table()] ?? []) as typeof requests
        }
      }
    }),
  )
}

// The raw ceiling: the same index range, every page, nothing done with the items. `projected` reads only what the
// stats read (time and payload), which isolates the cost of the aggregation itself.
async function rawQuery(project: string, projected = false): Promise<number> {
  let count = 0
  let startKey: Record<string, unknown> | undefined
  do {
    const page: QueryCommandOutput = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK BETWEEN :a AND :b',
        ExpressionAttributeValues: {
          ':pk': `FBT#${project}`,
          ':a': new Date(START).toISOString(),
          ':b': new Date(START + WINDOW_MS).toISOString(),
        },
        ExclusiveStartKey: startKey,
        ...(projected ? { ProjectionExpression: 'PK, created_at, payload' } : {}),
      }),
    )
    count += page.Items?.length ?? 0
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  return count
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

async function main(): Promise<void> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  config.dynamoEndpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  config.tableName = 'loom-bench-feedback'
  await ensureTable(config.tableName)
  // Imported after config is set: the app reads it when first used.
  const { app } = await import('#functions/tracing/get-feedback-stats/handler')

  const { key } = await createApiKey({ userId: 'bench-user', entity: 'bench' })
  const project = 'bench/feedback'
  const seeded = performance.now()
  await seedRows(project)
  console.log(`seeded ${ROWS} rows in ${((performance.now() - seeded) / 1000).toFixed(1)} s`)
  const sample = row(project, 0)
  console.log(
    writeCostLine('write cost, one feedback row', [feedbackItem(sample, { json: JSON.stringify(sample.payload) })]),
  )

  const headers = {
    authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}`,
    'content-type': 'application/json',
  }
  const body = JSON.stringify({
    project_id: project,
    start: new Date(START).toISOString(),
    end: new Date(START + WINDOW_MS).toISOString(),
    feedback_type: 'wandb.runnable.relevance',
    metrics: [
      {
        json_path: 'output.score',
        value_type: 'numeric',
        aggregations: ['avg', 'min', 'max', 'sum', 'count'],
        percentiles: [50, 95, 99],
      },
      { json_path: 'output.passed', value_type: 'boolean' },
      { json_path: 'output.label', value_type: 'categorical' },
    ],
  })
  const stats = async () => {
    const res = await app.request('/feedback/stats', { method: 'POST', headers, body })
    if (res.status !== 200) throw new Error(`feedback/stats answered ${res.status}: ${await res.text()}`)
    return (await res.json()) as { buckets: { count: number }[]; granularity: number }
  }

  // Warm-up (JIT, auth cache, dynalite's LevelDB caches), then alternate so both see the same conditions.
  const check = await stats()
  const rows = check.buckets.reduce((n, b) => n + b.count, 0)
  if (rows !== ROWS || (await rawQuery(project)) !== ROWS) throw new Error(`expected ${ROWS} rows, stats saw ${rows}`)
  const raw: number[] = []
  const projected: number[] = []
  const agg: number[] = []
  for (let i = 0; i < ITERATIONS; i++) {
    let t = performance.now()
    await rawQuery(project)
    raw.push(performance.now() - t)
    t = performance.now()
    await rawQuery(project, true)
    projected.push(performance.now() - t)
    t = performance.now()
    await stats()
    agg.push(performance.now() - t)
  }
  const r = median(raw)
  const p = median(projected)
  const s = median(agg)
  console.log(`rows in window:          ${ROWS} (${check.buckets.length} buckets of ${check.granularity} s)`)
  console.log(
    `raw Query, median:       ${r.toFixed(0)} ms  (${((ROWS / r) * 1000).toFixed(0)} items/s)  runs ${raw.map((x) => x.toFixed(0)).join(', ')}`,
  )
  console.log(`projected Query, median: ${p.toFixed(0)} ms  runs ${projected.map((x) => x.toFixed(0)).join(', ')}`)
  console.log(
    `feedback/stats, median:  ${s.toFixed(0)} ms  (${((ROWS / s) * 1000).toFixed(0)} rows/s)  runs ${agg.map((x) => x.toFixed(0)).join(', ')}`,
  )
  console.log(`ratio stats / raw:       ${(s / r).toFixed(2)}x  (target <= 1.5x)`)
  console.log(`ratio stats / projected: ${(s / p).toFixed(2)}x  (cost of auth, validation and aggregation)`)
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

await main()
