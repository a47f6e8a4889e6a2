/**
 * `npm run bench:tracing:feedback-query [calls] [iterations]`: `POST /calls/query_stats` filtered by a feedback payload
 * condition (`feedback.[wandb.runnable.relevance].payload.output.score > 0.5`) over `calls` calls (default 100,000) of
 * which one in ten has a feedback row, end to end through the function's app, next to the storage's raw read of those
 * feedback rows measured in the same run on the same table (a plain Query of the type's listing, every page, every
 * projected attribute, nothing done with the items). The rows are stored as `feedback/create` writes them for calls
 * that exist (flagged `call_live`), so the count reads the feedback and the project's deletion markers, not the calls.
 * Storage is an in-process dynalite, so absolute figures are for this machine only; the ratio is what the target
 * (≤ 2×) is about. Prints the CPU model and the load average.
 */
import type { AddressInfo } from 'node:net'
import { loadavg } from 'node:os'
import { BatchWriteCommand, type BatchWriteCommandOutput, QueryCommand } from '@aws-sdk/lib-dynamodb'
import dynalite from 'dynalite'
import { createApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { db, table } from '#shared/db/client'
import { ensureTable } from '#shared/db/ensure-table'
import { feedbackItem } from '#shared/db/feedback-repository'
import { uuidv7 } from '#shared/tracing/ids'
import { feedbackRow } from '../test/support/feedback.js'
import { cpuModel } from './support/processes.js'

const CALLS = Number(process.argv[2] ?? 100_000)
const ITERATIONS = Number(process.argv[3] ?? 5)
const EVERY = 10
const TYPE = 'wandb.runnable.relevance'
const START = Date.parse('2025-03-01T00:00:00Z')

let seed = 11
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

async function writeAll(items: Record<string, unknown>[]): Promise<void> {
  const batches: Record<string, unknown>[][] = []
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25))
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

// Calls as the SDK writes them (start and end parts with their index keys), one in ten scored by a monitor.
async function seed_(project: string): Promise<number> {
  const { startRecord, endRecord } = await import('#shared/db/call-records')
  let above = 0
  const chunk = 10_000
  for (let from = 0; from < CALLS; from += chunk) {
    const items: Record<string, unknown>[] = []
    for (let i = from; i < Math.min(CALLS, from + chunk); i++) {
      const at = START + i * 100
      const id = uuidv7(at)
      const started = new Date(at).toISOString().replace('Z', '000Z')
      const ended = new Date(at + 40).toISOString().replace('Z', '000Z')
      items.push(
        startRecord({
          project_id: project,
          id,
          op_name: `weave:///${project}/op/answer:abc`,
          trace_id: id,
          started_at: started,
          attributes: { json: '{"weave":{"client_version":"0.11.1"}}' },
          inputs: { json: JSON.stringify({ question: `question ${i}`, context: 'lorem ipsum '.repeat(10) }) },
          wb_user_id: 'bench-user',
          size: 200,
        }),
        endRecord({
          project_id: project,
          id,
          trace_id: id,
          ended_at: ended,
          output: { json: JSON.stringify({ answer: `answer ${i}` }) },
          summary: { json: '{}' },
          size: 40,
        }),
      )
      if (i % EVERY !== 0) continue
      const score = Math.round(rand() * 1000) / 1000
      if (score > 0.5) above++
      const created = new Date(at + 1000).toISOString()
      const row = feedbackRow(
        project,
        created,
        { output: { score, passed: score > 0.5 } },
        {
          id: uuidv7(at + 1000),
          weave_ref: `weave:///${project}/call/${id}`,
          wb_user_id: 'bench-user',
          feedback_type: TYPE,
          runnable_ref: `weave:///${project}/op/relevance:abc`,
          call_ref: `weave:///${project}/call/${uuidv7(at + 1000)}`,
        },
      )
      // Scored after the call started, as monitors do: feedback/create finds the call live and flags the row.
      items.push(feedbackItem(row, { json: JSON.stringify(row.payload) }, { callLive: true }))
    }
    await writeAll(items)
  }
  return above
}

// The raw read: the type's listing (GSI2), every page, every projected attribute.
async function rawFeedbackRead(project: string): Promise<number> {
  let count = 0
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': `FBTY#${project}#${TYPE}` },
        ExclusiveStartKey: startKey,
      }),
    )
    count += page.Items?.length ?? 0
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  return count
}

// The storage floor of Loom's access pattern, with nothing done with the items: the project's feedback listing
// (GSI1, the type as a filter, the attributes Loom projects) and the project's deletion markers (one strongly
// consistent Query per shard, in parallel; empty here, as nothing was deleted).
async function rawFloor(project: string): Promise<void> {
  const { allShards, deletedCallsPk } = await import('#shared/db/call-keys')
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        FilterExpression: 'feedback_type = :t',
        ExpressionAttributeValues: { ':pk': `FBT#${project}`, ':t': TYPE },
        ProjectionExpression: 'PK, SK, GSI3PK, created_at, feedback_type, payload, trigger_ref, call_live',
        ExclusiveStartKey: startKey,
      }),
    )
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  await Promise.all(
    allShards((shard) => deletedCallsPk(project, shard)).map((pk) =>
      db().send(
        new QueryCommand({
          TableName: table(),
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ProjectionExpression: 'SK',
          ConsistentRead: true,
        }),
      ),
    ),
  )
}

async function main(): Promise<void> {
  console.log(`CPU: ${cpuModel()}; load average at start: ${load()}; Node ${process.version}`)
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  config.dynamoEndpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  config.tableName = 'loom-bench-feedback-query'
  await ensureTable(config.tableName)
  const { app } = await import('#functions/tracing/query-call-stats/handler')
  const { key } = await createApiKey({ userId: 'bench-user', entity: 'bench' })
  const project = 'bench/feedback-query'
  const t0 = performance.now()
  const expected = await seed_(project)
  const feedbackRows = Math.ceil(CALLS / EVERY)
  console.log(
    `seeded ${CALLS} calls and ${feedbackRows} feedback rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )

  const headers = {
    authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}`,
    'content-type': 'application/json',
  }
  const body = JSON.stringify({
    project_id: project,
    query: { $expr: { $gt: [{ $getField: `feedback.[${TYPE}].payload.output.score` }, { $literal: 0.5 }] } },
  })
  const stats = async () => {
    const res = await app.request('/calls/query_stats', { method: 'POST', headers, body })
    if (res.status !== 200) throw new Error(`calls/query_stats answered ${res.status}: ${await res.text()}`)
    return (await res.json()) as { count: number }
  }

  // Warm-up and check, then alternate so both see the same conditions.
  const check = await stats()
  if (check.count !== expected) throw new Error(`expected ${expected} calls, query_stats counted ${check.count}`)
  if ((await rawFeedbackRead(project)) !== feedbackRows) throw new Error('raw read missed feedback rows')
  const raw: number[] = []
  const floor: number[] = []
  const ours: number[] = []
  for (let i = 0; i < ITERATIONS; i++) {
    let t = performance.now()
    await rawFeedbackRead(project)
    raw.push(performance.now() - t)
    t = performance.now()
    await rawFloor(project)
    floor.push(performance.now() - t)
    t = performance.now()
    await stats()
    ours.push(performance.now() - t)
  }
  const r = median(raw)
  const s = median(ours)
  const runs = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ')
  console.log(`calls: ${CALLS}, with feedback: ${feedbackRows}, matching score > 0.5: ${expected}`)
  console.log(`raw Query of the ${feedbackRows} feedback rows, median: ${r.toFixed(0)} ms  runs ${runs(raw)}`)
  console.log(`calls/query_stats by feedback, median:  ${s.toFixed(0)} ms  runs ${runs(ours)}`)
  const f = median(floor)
  console.log(`storage floor (feedback listing + deletion markers), median: ${f.toFixed(0)} ms  runs ${runs(floor)}`)
  console.log(`ratio query_stats / raw feedback read: ${(s / r).toFixed(2)}x  (target <= 2x)`)
  console.log(
    `ratio storage floor / raw feedback read: ${(f / r).toFixed(2)}x;  query_stats / floor: ${(s / f).toFixed(2)}x`,
  )
  console.log(`CPU: ${cpuModel()}; load average at end: ${load()}`)
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

await main()
