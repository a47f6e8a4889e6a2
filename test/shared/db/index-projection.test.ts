import { randomUUID } from 'node:crypto'
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb'
import { QueryCommand } from '@aws-sdk/lib-dynamodb'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as feedbackQueryApp } from '#functions/tracing/query-feedback/handler'
import { app as streamQueryApp } from '#functions/tracing/stream-query-calls/handler'
import { LEAN_ATTRIBUTES } from '#shared/db/call-keys'
import { db, rawDb, table } from '#shared/db/client'
import { fetchFromTable } from '#shared/db/index-query'
import { GLOBAL_INDEXES, indexProjects } from '#shared/db/table'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { endPart, startPart, writeCalls } from '../../support/calls.js'
import { seedFeedback } from '../../support/feedback.js'

const FEEDBACK_WINDOW = ['PK', 'created_at', 'payload', 'trigger_ref', 'feedback_type']

describe('index projections (shared/db/table.ts)', () => {
  it('pins what each index copies: summaries of calls and feedback windows, keys elsewhere', () => {
    const window = ['created_at', 'payload', 'trigger_ref', 'feedback_type']
    expect(GLOBAL_INDEXES.map((i) => [i.indexName, i.projection])).toEqual([
      ['GSI1', { type: 'ALL' }],
      ['GSI2', { type: 'INCLUDE', attributes: [...window, 'object_id', 'digest'] }],
      ['GSI3', { type: 'KEYS_ONLY' }],
      ['GSI4', { type: 'INCLUDE', attributes: window }],
      ['GSI5', { type: 'KEYS_ONLY' }],
    ])
    // None of the large columns is copied into the narrowed indexes.
    for (const column of ['attributes', 'inputs', 'otel_dump', 'output', 'row_dump', 'val', 'data']) {
      for (const index of GLOBAL_INDEXES.filter((i) => i.indexName !== 'GSI1')) {
        expect(indexProjects(index.indexName, [column])).toBe(false)
      }
    }
  })

  it("stays within DynamoDB's limits: 20 included attributes per index, 100 per table", () => {
    const lists = GLOBAL_INDEXES.map((i) => (i.projection.type === 'INCLUDE' ? i.projection.attributes.length : 0))
    for (const length of lists) expect(length).toBeLessThanOrEqual(20)
    expect(lists.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(100)
  })

  it('serves the bulk readers from the index: lean trace walks, trace sizes, feedback windows', () => {
    expect(indexProjects('GSI1', [...LEAN_ATTRIBUTES, 'GSI1SK'])).toBe(true)
    expect(indexProjects('GSI1', ['id', 'SK', 'size'])).toBe(true)
    for (const index of ['GSI1', 'GSI2', 'GSI4']) expect(indexProjects(index, FEEDBACK_WINDOW)).toBe(true)
    // Everything else fetches back from the table.
    for (const index of ['GSI2', 'GSI3', 'GSI4', 'GSI5']) expect(indexProjects(index, LEAN_ATTRIBUTES)).toBe(false)
  })

  it('is what the engine created', async () => {
    const { Table } = await rawDb().send(new DescribeTableCommand({ TableName: table() }))
    const projections = new Map((Table?.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i.Projection]))
    for (const index of GLOBAL_INDEXES) {
      const p = projections.get(index.indexName)
      expect(p?.ProjectionType).toBe(index.projection.type)
      if (index.projection.type === 'INCLUDE') {
        expect([...(p?.NonKeyAttributes ?? [])].sort()).toEqual([...index.projection.attributes].sort())
      }
    }
  })
})

describe('reads through narrowed indexes return whole items', () => {
  let caller: TestCaller
  let project: string
  const root = randomUUID()
  const child = randomUUID()
  const threaded = randomUUID()
  const trace = randomUUID()
  const big = 'x'.repeat(5_000)

  beforeAll(async () => {
    caller = await newCaller()
    project = `${caller.entity}/proj`
    await writeCalls(caller, [
      {
        start: startPart(project, {
          id: root,
          trace_id: trace,
          started_at: '2025-01-01T00:00:00Z',
          attributes: { a: big },
          inputs: { prompt: big },
        }),
        end: endPart(project, root, { output: { text: big }, summary: { usage: {} } }),
      },
      {
        start: startPart(project, {
          id: child,
          trace_id: trace,
          parent_id: root,
          started_at: '2025-01-01T00:00:01Z',
          inputs: { prompt: 'child' },
        }),
        end: endPart(project, child, { output: 42 }),
      },
      {
        start: startPart(project, {
          id: threaded,
          trace_id: randomUUID(),
          thread_id: 'th-1',
          started_at: '2025-01-01T00:00:02Z',
          op_name: 'weave:///e/p/op/other:v1',
          inputs: { prompt: 'threaded' },
        }),
      },
    ])
  })

  it('stores only keys in a keys-only index, and whole calls in the trace index', async () => {
    const query = (index: string, pk: string) =>
      db().send(
        new QueryCommand({
          TableName: table(),
          IndexName: index,
          KeyConditionExpression: `${index}PK = :pk`,
          ExpressionAttributeValues: { ':pk': pk },
        }),
      )
    const thread = await query('GSI5', `CALLTHREAD#${project}#th-1`)
    expect(Object.keys(thread.Items?.[0] ?? {}).sort()).toEqual(['GSI5PK', 'GSI5SK', 'PK', 'SK'])
    const traceItems = (await query('GSI1', `CALLTRACE#${project}#${trace}`)).Items ?? []
    expect(traceItems).toHaveLength(4)
    for (const item of traceItems) {
      expect(item).toHaveProperty(item.SK === 'S' ? 'inputs' : 'output')
      expect(item).toHaveProperty('size')
    }
    // Fetched back, in the entries' order, with their index keys.
    const whole = await fetchFromTable([...(thread.Items ?? []), { PK: 'CALL#none#x', SK: 'S' }])
    expect(whole).toHaveLength(1)
    expect(whole[0]).toMatchObject({ id: threaded, GSI5SK: thread.Items?.[0]?.GSI5SK })
    expect(whole[0]?.inputs).toEqual({ json: JSON.stringify({ prompt: 'threaded' }) })
  })

  async function streamQuery(body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    const res = await streamQueryApp.request(
      '/calls/stream_query',
      jsonInit({ project_id: project, ...body }, caller.basic),
    )
    expect(res.status).toBe(200)
    return (await res.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
  }

  it('answers every index filter with the calls a read by id returns, in the same order', async () => {
    const byId = await streamQuery({ filter: { call_ids: [root, child, threaded] } })
    expect(byId.map((c) => c.id)).toEqual([root, child, threaded])
    expect(byId[0]).toMatchObject({ inputs: { prompt: big }, attributes: { a: big }, output: { text: big } })
    const same = (calls: Record<string, unknown>[], ids: string[]) =>
      expect(calls).toEqual(ids.map((id) => byId.find((c) => c.id === id)))
    same(await streamQuery({}), [root, child, threaded]) // timeline, GSI2
    same(await streamQuery({ filter: { trace_ids: [trace] } }), [root, child]) // trace, GSI1
    same(await streamQuery({ filter: { op_names: ['weave:///e/p/op/other:*'] } }), [threaded]) // op, GSI3
    same(await streamQuery({ filter: { parent_ids: [root] } }), [child]) // parent, GSI4
    same(await streamQuery({ filter: { trace_roots_only: true } }), [root, threaded]) // roots, GSI4
    same(await streamQuery({ filter: { thread_ids: ['th-1'] } }), [threaded]) // thread, GSI5
  })

  it('answers feedback queries through every index with whole rows', async () => {
    const ref = `weave:///${project}/call/${root}`
    const rows = [
      await seedFeedback(project, '2025-01-01T00:00:00.000000Z', { note: big }, { weave_ref: ref }),
      await seedFeedback(project, '2025-01-01T00:00:01.000000Z', { score: 1 }, { feedback_type: 'other' }),
    ]
    const queryFeedback = async (query: unknown) => {
      const body = {
        project_id: project,
        ...(query === undefined ? {} : { query }),
        sort_by: [{ field: 'created_at', direction: 'asc' }],
      }
      const res = await feedbackQueryApp.request('/feedback/query', jsonInit(body, caller.basic))
      expect(res.status).toBe(200)
      return ((await res.json()) as { result: Record<string, unknown>[] }).result
    }
    const eq = (field: string, value: string) => ({ $expr: { $eq: [{ $getField: field }, { $literal: value }] } })
    const all = await queryFeedback(undefined) // GSI1
    expect(all.map((r) => r.id)).toEqual(rows.map((r) => r.id))
    expect(all[0]?.payload).toEqual({ note: big })
    expect(await queryFeedback(eq('weave_ref', ref))).toEqual([all[0]]) // GSI3, keys only
    expect(await queryFeedback(eq('feedback_type', 'other'))).toEqual([all[1]]) // GSI2
  })
})
