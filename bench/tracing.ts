/**
 * `npm run bench:tracing`: the calls side of the tracing API against an in-process dynalite, each figure next to the
 * storage's own ceiling measured in the same run on the same table (raw BatchWriteItem / Query of items of the same
 * size). Prints a Markdown section for docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { BatchWriteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb'
import dynalite from 'dynalite'
import { createApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { COUNTER_SHARDS } from '#shared/db/call-counter'
import { db, table } from '#shared/db/client'
import { ensureTable } from '#shared/db/ensure-table'
import { uuidv7 } from '#shared/tracing/ids'
import { app as statsApp } from '../functions/tracing/query-call-stats/handler.js'
import { app as usageApp } from '../functions/tracing/trace-usage/handler.js'
import { app as upsertApp } from '../functions/tracing/upsert-call-batch/handler.js'
import { writeCostLine } from './index-cost.js'
import { addToCallCount } from './support/call-count.js'

const INGEST_CALLS = Number(process.env.BENCH_INGEST_CALLS ?? 20_000)
const TRACE_CALLS = Number(process.env.BENCH_TRACE_CALLS ?? 10_000)
const TARGET_COUNT = 1_000_000
const BATCH_CALLS = 50
const CONCURRENCY = 8

async function startDynalite() {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  return { endpoint: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) }
}

const now = () => performance.now()
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] ?? 0
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++] as T)
    }),
  )
}

// A realistic SDK call: ~0.6 KB of inputs, ~0.4 KB of output, usage keyed by model.
function callParts(project: string, traceId: string, parentId: string | null, i: number) {
  const id = uuidv7()
  const started = new Date(Date.UTC(2025, 0, 1) + i * 10)
  const start = {
    project_id: project,
    id,
    trace_id: traceId,
    parent_id: parentId,
    op_name: `weave:///bench/p/op/step_${i % 7}:abc123`,
    started_at: started.toISOString(),
    attributes: { weave: { client_version: '0.11.1', source: 'js-sdk' } },
    inputs: { prompt: 'lorem ipsum '.repeat(40), temperature: 0.7, i },
  }
  const end = {
    project_id: project,
    id,
    trace_id: traceId,
    ended_at: new Date(started.getTime() + 250).toISOString(),
    output: { text: 'dolor sit amet '.repeat(25) },
    summary: { usage: { 'gpt-4o': { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160, requests: 1 } } },
  }
  return { id, start, end }
}

async function rawWrite(items: Record<string, unknown>[]): Promise<number> {
  const chunks: Record<string, unknown>[][] = []
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25))
  const t0 = now()
  await pool(chunks, CONCURRENCY, async (chunk) => {
    let requests = chunk.map((Item) => ({ PutRequest: { Item } }))
    while (requests.length > 0) {
      const res = await db().send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }))
      requests = (res.UnprocessedItems?.[table()] ?? []) as typeof requests
    }
  })
  return items.length / ((now() - t0) / 1000)
}

async function rawQueryAll(
  index: string,
  pk: string,
  attributes?: readonly string[],
): Promise<{ ms: number; items: number }> {
  const projection =
    attributes === undefined
      ? {}
      : {
          ProjectionExpression: attributes.map((_, i) => `#a${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(attributes.map((a, i) => [`#a${i}`, a])),
        }
  const t0 = now()
  let items = 0
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: index,
        KeyConditionExpression: `${index}PK = :pk`,
        ExpressionAttributeValues: { ':pk': pk },
        ExclusiveStartKey: startKey,
        ...projection,
      }),
    )
    items += page.Count ?? 0
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  return { ms: now() - t0, items }
}

async function main() {
  const dynamo = await startDynalite()
  config.dynamoEndpoint = dynamo.endpoint
  config.tableName = `loom-bench-${randomUUID().slice(0, 8)}`
  await ensureTable(config.tableName)
  const entity = 'bench'
  const { key, record } = await createApiKey({ userId: 'bench-user', entity })
  const auth = {
    authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}`,
    'content-type': 'application/json',
  }
  const project = `${entity}/ingest`
  const out: string[] = []
  const log = (line: string) => {
    out.push(line)
    process.stderr.write(`${line}\n`)
  }
  log(`Run: ${new Date().toISOString()}, Node ${process.version}, dynalite in-process, user ${record.userId}`)

  // 1+2. Raw write ceiling vs ingest, interleaved in rounds so both see the same background load on this shared
  // machine: raw = BatchWriteItem of the very items upsert_batch writes (start + end parts with their index keys,
  // other call ids); ingest = call/upsert_batch, batches of 50 calls (start + end each), 8 requests in flight.
  const { startRecord, endRecord } = await import('#shared/db/call-records')
  const rawItemsOf = (c: ReturnType<typeof callParts>) => [
    startRecord({
      project_id: c.start.project_id,
      id: c.id,
      op_name: c.start.op_name,
      trace_id: c.start.trace_id,
      started_at: `${c.start.started_at.slice(0, 23)}000Z`,
      attributes: { json: JSON.stringify(c.start.attributes) },
      inputs: { json: JSON.stringify(c.start.inputs) },
      wb_user_id: 'bench-user',
      size: 800,
    }),
    endRecord({
      project_id: c.end.project_id,
      id: c.id,
      trace_id: c.end.trace_id,
      ended_at: `${c.end.ended_at.slice(0, 23)}000Z`,
      output: { json: JSON.stringify(c.end.output) },
      summary: { json: JSON.stringify(c.end.summary) },
      size: 500,
    }),
  ]
  const ROUNDS = 10
  const perRound = Math.ceil(INGEST_CALLS / ROUNDS)
  let rawItemsTotal = 0
  let rawSeconds = 0
  let ingestSeconds = 0
  let itemBytes = 0
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const rawCalls = Array.from({ length: perRound }, (_, i) => callParts(`${entity}/raw`, randomUUID(), null, i))
    const rawItems = rawCalls.flatMap(rawItemsOf)
    itemBytes = median(rawItems.map((i) => Buffer.byteLength(JSON.stringify(i))))
    const rawRate = await rawWrite(rawItems)
    rawItemsTotal += rawItems.length
    rawSeconds += rawItems.length / rawRate
    const calls = Array.from({ length: perRound }, (_, i) =>
      callParts(project, randomUUID(), null, round * perRound + i),
    )
    const batches: string[] = []
    for (let i = 0; i < calls.length; i += BATCH_CALLS) {
      const batch = calls.slice(i, i + BATCH_CALLS).flatMap((c) => [
        { mode: 'start', req: { start: c.start } },
        { mode: 'end', req: { end: c.end } },
      ])
      batches.push(JSON.stringify({ batch }))
    }
    const t0 = now()
    await pool(batches, CONCURRENCY, async (body) => {
      const res = await upsertApp.request('/call/upsert_batch', { method: 'POST', headers: auth, body })
      if (res.status !== 200) throw new Error(`upsert_batch ${res.status}: ${await res.text()}`)
    })
    const seconds = (now() - t0) / 1000
    ingestSeconds += seconds
    ratios.push((2 * perRound) / seconds / rawRate)
  }
  const rawItemsPerSec = rawItemsTotal / rawSeconds
  const callsPerSec = (perRound * ROUNDS) / ingestSeconds
  log(
    `raw BatchWriteItem: ${fmt(rawItemsPerSec)} items/s (${fmt(rawItemsTotal)} items of ~${itemBytes} B, ${ROUNDS} rounds)`,
  )
  log(
    `call/upsert_batch: ${fmt(callsPerSec)} calls/s = ${fmt(2 * callsPerSec)} item writes/s ` +
      `(${fmt(perRound * ROUNDS)} calls) = ${fmt((100 * 2 * callsPerSec) / rawItemsPerSec, 1)}% of the raw ceiling; ` +
      `median of ${ROUNDS} interleaved rounds ${fmt(100 * median(ratios), 0)}% ` +
      `(per round: ${ratios.map((r) => `${fmt(100 * r, 0)}%`).join(', ')})`,
  )

  // Write cost per call: the parts upsert_batch stored (read back by key), base item plus index copies, under the
  // table's projections against every index projecting ALL.
  const storedParts = async (c: ReturnType<typeof callParts>) => {
    const body = JSON.stringify({
      batch: [
        { mode: 'start', req: { start: c.start } },
        { mode: 'end', req: { end: c.end } },
      ],
    })
    const res = await upsertApp.request('/call/upsert_batch', { method: 'POST', headers: auth, body })
    if (res.status !== 200) throw new Error(`upsert_batch ${res.status}: ${await res.text()}`)
    return Promise.all(
      ['S', 'E'].map(async (SK) => {
        const key = { PK: `CALL#${c.start.project_id}#${c.id}`, SK }
        const { Item } = await db().send(new GetCommand({ TableName: table(), Key: key }))
        if (Item === undefined) throw new Error(`call part ${SK} not stored`)
        return Item
      }),
    )
  }
  const costProject = `${entity}/write-cost`
  const benchCall = await storedParts(callParts(costProject, randomUUID(), null, 1))
  log(writeCostLine('write cost, one bench call (start + end)', benchCall))
  log(writeCostLine('  its start part alone', benchCall.slice(0, 1)))
  const chat = callParts(costProject, randomUUID(), randomUUID(), 2)
  // A chat completion as the gateway or an SDK records it: ~8 KB of messages in, ~2 KB out, in a thread.
  Object.assign(chat.start, {
    thread_id: 'bench-thread',
    inputs: {
      messages: Array.from({ length: 8 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: 'lorem ipsum '.repeat(80),
      })),
    },
  })
  ;(chat.end as Record<string, unknown>).output = {
    choices: [{ message: { role: 'assistant', content: 'dolor sit amet '.repeat(130) } }],
  }
  log(writeCostLine('write cost, one chat-sized call in a thread (start + end)', await storedParts(chat)))

  // 3. Unfiltered query_stats: first with the real calls, then with the counter brought to 1,000,000.
  const stat = async (p: string) => {
    const times: number[] = []
    let body = ''
    for (let i = 0; i < 200; i++) {
      const t = now()
      const res = await statsApp.request('/calls/query_stats', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ project_id: p }),
      })
      body = await res.text()
      times.push(now() - t)
    }
    return { med: median(times), p95: p95(times), body }
  }
  const small = await stat(project)
  log(
    `calls/query_stats (unfiltered) at ${fmt(INGEST_CALLS)} calls: median ${fmt(small.med, 2)} ms, p95 ${fmt(small.p95, 2)} ms → ${small.body}`,
  )
  // The counter shards as a million start requests would leave them: 16 shards, the rest of the million spread evenly.
  await addToCallCount(project, TARGET_COUNT - INGEST_CALLS)
  const big = await stat(project)
  log(
    `calls/query_stats (unfiltered) at ${fmt(TARGET_COUNT)} counted calls: median ${fmt(big.med, 2)} ms, p95 ${fmt(big.p95, 2)} ms → ${big.body}`,
  )
  const counterTimes: number[] = []
  for (let i = 0; i < 200; i++) {
    const t = now()
    await db().send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `CALLCOUNT#${project}` },
      }),
    )
    counterTimes.push(now() - t)
  }
  log(`raw Query of the ${COUNTER_SHARDS} counter items: median ${fmt(median(counterTimes), 2)} ms`)

  // 4. trace/usage on one 10,000-call trace (a tree, every call with usage) vs a raw Query of the same items.
  const traceId = randomUUID()
  const traceProject = `${entity}/trace`
  const tree: ReturnType<typeof callParts>[] = []
  for (let i = 0; i < TRACE_CALLS; i++) {
    const parent = i === 0 ? null : (tree[Math.floor((i - 1) / 4)]?.id ?? null)
    tree.push(callParts(traceProject, traceId, parent, i))
  }
  const treeBatches: string[] = []
  for (let i = 0; i < tree.length; i += BATCH_CALLS) {
    const batch = tree.slice(i, i + BATCH_CALLS).flatMap((c) => [
      { mode: 'start', req: { start: c.start } },
      { mode: 'end', req: { end: c.end } },
    ])
    treeBatches.push(JSON.stringify({ batch }))
  }
  await pool(treeBatches, CONCURRENCY, async (body) => {
    const res = await upsertApp.request('/call/upsert_batch', { method: 'POST', headers: auth, body })
    if (res.status !== 200) throw new Error(`upsert_batch ${res.status}`)
  })
  const usageBody = JSON.stringify({ project_id: traceProject, filter: { trace_ids: [traceId] } })
  const { LEAN_ATTRIBUTES } = await import('#shared/db/call-keys')
  const rawTimes: number[] = []
  const leanTimes: number[] = []
  const usageTimes: number[] = []
  let rawItemsRead = 0
  let usageKeys = 0
  for (let round = 0; round < 5; round++) {
    const raw = await rawQueryAll('GSI1', `CALLTRACE#${traceProject}#${traceId}`)
    rawTimes.push(raw.ms)
    rawItemsRead = raw.items
    leanTimes.push((await rawQueryAll('GSI1', `CALLTRACE#${traceProject}#${traceId}`, LEAN_ATTRIBUTES)).ms)
    const t = now()
    const res = await usageApp.request('/trace/usage', { method: 'POST', headers: auth, body: usageBody })
    const json = (await res.json()) as { call_usage: Record<string, unknown> }
    usageTimes.push(now() - t)
    usageKeys = Object.keys(json.call_usage).length
  }
  const ratio = median(usageTimes) / median(rawTimes)
  log(
    `trace/usage on a ${fmt(TRACE_CALLS)}-call trace: median ${fmt(median(usageTimes))} ms (${fmt(usageKeys)} calls rolled up); ` +
      `raw Query of the same ${fmt(rawItemsRead)} items: median ${fmt(median(rawTimes))} ms (ratio ${fmt(ratio, 2)}×); ` +
      `raw Query of them with the same projection trace/usage uses: median ${fmt(median(leanTimes))} ms ` +
      `(ratio ${fmt(median(usageTimes) / median(leanTimes), 2)}×)`,
  )
  await dynamo.close()
  process.stdout.write(`${out.join('\n')}\n`)
}

await main()
