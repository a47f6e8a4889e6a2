import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { beforeAll, describe, expect, it } from 'vitest'
import { app, handler } from '#functions/tracing/stream-query-calls/handler'
import { config } from '#shared/config'
import { db } from '#shared/db/client'
import { pythonDumpsInOrder } from '#shared/tracing/digest'
import { jsonInit, newCaller } from '../../support/auth.js'
import { type CallFixture, callFixture } from '../../support/call-fixture.js'
import { authorizerFor, endPart, startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { watchDynamoInFlight } from '../../support/hold-dynamo.js'

let fx: CallFixture

beforeAll(async () => {
  fx = await callFixture()
})

async function query(body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const res = await app.request('/calls/stream_query', jsonInit({ project_id: fx.project, ...body }, fx.caller.basic))
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
  const text = await res.text()
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

async function ids(body: Record<string, unknown>): Promise<string[]> {
  const names = new Map([
    [fx.a, 'a'],
    [fx.b, 'b'],
    [fx.c, 'c'],
    [fx.d, 'd'],
  ])
  return (await query(body)).map((call) => names.get(call.id as string) ?? '?')
}

const get = (path: string) => ({ $getField: path })
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`)
const lit = (v: unknown) => ({ $literal: v })

describe('POST /calls/stream_query', () => {
  it('streams JSON Lines in started_at order without deleted calls', async () => {
    // Act
    const res = await app.request('/calls/stream_query', jsonInit({ project_id: fx.project }, fx.caller.basic))
    const text = await res.text()

    // Assess
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/jsonl')
    expect(text.endsWith('\n')).toBe(true)
    expect(await ids({})).toEqual(['a', 'b', 'c'])
  })

  it('answers with the media type the Accept header asks for', async () => {
    const init = jsonInit({ project_id: fx.project, limit: 1 }, { ...fx.caller.basic, accept: 'application/x-ndjson' })
    const res = await app.request('/calls/stream_query', init)
    expect(res.headers.get('content-type')).toBe('application/x-ndjson')
    expect((await res.text()).split('\n').filter((l) => l !== '')).toHaveLength(1)
  })

  it.each([
    [
      'op_names',
      { op_names: ['weave:///e/p/op/alpha:v2', 'plain_op', ...names('weave:///e/p/op/other', 300)] },
      ['b', 'c'],
    ],
    ['trace_ids', { trace_ids: ['tc', ...names('trace', 300)] }, ['c']],
    ['parent_ids', { parent_ids: ['A', ...names('parent', 300)] }, ['b']],
    ['thread_ids', { thread_ids: ['th1', ...names('thread', 300)] }, ['c']],
  ])('filters by hundreds of %s without a DynamoDB Query per value at once', async (_what, filter, expected) => {
    // Prepare: a listing walks one index partition per value (per shard for an op name), all at once; 1,000 op names
    // sent 8,000 Queries and stalled the server for every tenant (QA).
    const resolved = JSON.parse(JSON.stringify(filter).replaceAll('"A"', JSON.stringify(fx.a)))
    const watch = watchDynamoInFlight((c) => c.name === 'QueryCommand')

    // Act
    let got: string[]
    try {
      got = await ids({ filter: resolved })
    } finally {
      watch.stop()
    }

    // Assess
    expect(got).toEqual(expected)
    expect(watch.max()).toBeLessThanOrEqual(64)
  })

  it('derives status, latency and trace name on every call', async () => {
    // Act
    const calls = await query({})

    // Assess
    expect(calls.map((c) => (c.summary as { weave: unknown }).weave)).toEqual([
      { status: 'success', trace_name: 'alpha', latency_ms: 200 },
      { status: 'error', trace_name: 'alpha', latency_ms: 1000 },
      { status: 'running', trace_name: 'plain_op' },
    ])
  })

  it.each([
    [{ op_names: ['weave:///e/p/op/alpha:*'] }, ['a', 'b']],
    [{ op_names: ['weave:///e/p/op/alpha:v2'] }, ['b']],
    [{ trace_roots_only: true }, ['a', 'c']],
    [{ parent_ids: ['A'] }, ['b']],
    [{ trace_ids: ['ta'] }, ['a', 'b']],
    [{ thread_ids: [] }, []],
    [{ thread_ids: ['th1'] }, ['c']],
    [{ turn_ids: ['tu1'] }, ['c']],
    [{ wb_run_ids: ['run1'] }, ['c']],
    [{ input_refs: ['weave:///e/p/object/ds:abc'] }, ['c']],
    [{ output_refs: ['weave:///e/p/object/m:1'] }, []],
    [{ call_ids: ['C', 'A'] }, ['a', 'c']],
    [{ op_names: [], trace_ids: [] }, ['a', 'b', 'c']],
  ])('filters with %j', async (filter, expected) => {
    // Prepare
    const resolved = JSON.parse(
      JSON.stringify(filter).replaceAll('"A"', JSON.stringify(fx.a)).replaceAll('"C"', JSON.stringify(fx.c)),
    )

    // Act
    const got = await ids({ filter: resolved })

    // Assess
    expect(got).toEqual(expected)
  })

  it('filters by wb_user_ids of the authenticated writer', async () => {
    expect(await ids({ filter: { wb_user_ids: [fx.caller.userId] } })).toEqual(['a', 'b', 'c'])
    expect(await ids({ filter: { wb_user_ids: ['someone-else'] } })).toEqual([])
  })

  it.each([
    ['int cast from the literal', { $gt: [get('inputs.x'), lit(3)] }, ['a', 'b']],
    ['double cast from the literal', { $gt: [get('inputs.x'), lit(2.4)] }, ['a', 'b', 'c']],
    ['string equality', { $eq: [get('inputs.name'), lit('Hello World')] }, ['a']],
    ['case-sensitive substring', { $contains: { input: get('inputs.name'), substr: lit('hello') } }, ['b']],
    [
      'case-insensitive substring',
      { $contains: { input: get('inputs.name'), substr: lit('HELLO'), case_insensitive: true } },
      ['a', 'b'],
    ],
    ['whole token', { $containsToken: { input: get('inputs.name'), substr: lit('there') } }, ['b']],
    ['partial token never matches', { $containsToken: { input: get('inputs.name'), substr: lit('ell') } }, []],
    ['NOT of NULL excludes the row', { $not: [{ $eq: [get('inputs.x'), lit(5)] }] }, ['b']],
    ['IS NULL on a column', { $eq: [get('parent_id'), lit(null)] }, ['a', 'c']],
    ['derived status', { $eq: [get('summary.weave.status'), lit('running')] }, ['c']],
    ['derived latency', { $gte: [get('summary.weave.latency_ms'), lit(1000)] }, ['b']],
    ['derived trace name', { $eq: [get('summary.weave.trace_name'), lit('alpha')] }, ['a', 'b']],
    ['datetime vs epoch seconds', { $gt: [get('started_at'), lit(1735689602)] }, ['c']],
    ['datetime vs ISO string', { $gte: [get('started_at'), lit('2025-01-01T00:00:02Z')] }, ['b', 'c']],
    ['exists', { $eq: [{ $convert: { input: get('inputs.ref'), to: 'exists' } }, lit(true)] }, ['c']],
    ['size of a list', { $gt: [{ $size: get('inputs.tags') }, lit(1)] }, ['a']],
    ['in a list', { $in: [get('op_name'), [lit('plain_op'), lit('nope')]] }, ['c']],
    [
      'or and and',
      { $or: [{ $and: [{ $eq: [get('inputs.x'), lit(5)] }] }, { $eq: [get('op_name'), lit('plain_op')] }] },
      ['a', 'c'],
    ],
    [
      'lt and gte as doubles',
      { $and: [{ $lt: [get('inputs.x'), lit(11.5)] }, { $gte: [get('inputs.x'), lit(2.5)] }] },
      ['a', 'c'],
    ],
    ['int cast drops a fractional value', { $lte: [get('inputs.x'), lit(5)] }, ['a']],
    ['$convert to double', { $lt: [{ $convert: { input: get('inputs.x'), to: 'double' } }, lit(3)] }, ['c']],
    [
      '$convert to double, not cast again by an int literal',
      { $gt: [{ $convert: { input: get('inputs.x'), to: 'double' } }, lit(2)] },
      ['a', 'b', 'c'],
    ],
  ])('evaluates %s', async (_name, expr, expected) => {
    expect(await ids({ query: { $expr: expr } })).toEqual(expected)
  })

  it('sorts by a JSON path numerically, then applies offset and limit', async () => {
    expect(await ids({ sort_by: [{ field: 'inputs.x', direction: 'desc' }] })).toEqual(['b', 'a', 'c'])
    expect(await ids({ sort_by: [{ field: 'inputs.x', direction: 'asc' }] })).toEqual(['c', 'a', 'b'])
    expect(await ids({ offset: 1, limit: 1 })).toEqual(['b'])
    expect(await ids({ limit: 2 })).toEqual(['a', 'b'])
    expect(await ids({ sort_by: [{ field: 'started_at', direction: 'desc' }], limit: 1 })).toEqual(['c'])
  })

  it('sorts a JSON path mixing numbers and strings with the numbers first in either direction', async () => {
    // Prepare
    const caller = await newCaller()
    const project = `${caller.entity}/mixed-${randomUUID().slice(0, 8)}`
    const values: Record<string, unknown> = { three: 3, text: 'abc', twenty: '20', none: undefined }
    await writeCalls(
      caller,
      Object.entries(values).map(([id, v]) => ({
        start: startPart(project, { id, inputs: v === undefined ? {} : { v } }),
      })),
    )
    const order = async (direction: string) => {
      const body = { project_id: project, columns: ['id'], sort_by: [{ field: 'inputs.v', direction }] }
      const res = await app.request('/calls/stream_query', jsonInit(body, caller.basic))
      return (await res.text())
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id)
    }

    // Act
    const asc = await order('asc')
    const desc = await order('desc')

    // Assess: ClickHouse orders by existence DESC, toFloat64OrNull (NULLs last) and the string (orm.py OrderField).
    expect(asc).toEqual(['three', 'twenty', 'text', 'none'])
    expect(desc).toEqual(['twenty', 'three', 'text', 'none'])
  })

  it('fills the requested columns plus the required ones, the others null (attributes and inputs {}) as Weave does', async () => {
    // Act
    const [first] = await query({ columns: ['output'], limit: 1 })
    const [whole] = await query({ limit: 1 })

    // Assess: every key of a full line is there, so the Python client's `CallSchema` (attributes and inputs required)
    // reads it.
    const line = first ?? {}
    expect(Object.keys(line).sort()).toEqual(Object.keys(whole ?? {}).sort())
    const selected = ['id', 'op_name', 'output', 'project_id', 'started_at', 'trace_id']
    for (const key of selected) expect([key, line[key]]).toEqual([key, whole?.[key]])
    expect(line.output).not.toBeNull()
    expect(line.attributes).toEqual({})
    expect(line.inputs).toEqual({})
    for (const key of ['parent_id', 'ended_at', 'exception', 'summary', 'display_name', 'wb_user_id'])
      expect([key, line[key]]).toEqual([key, null])
  })

  it('renders small columns from a read without the large JSON columns, the same values as a full read', async () => {
    // Act: the trace view's columns (no inputs, output or attributes) against every column.
    const columns = ['id', 'op_name', 'display_name', 'parent_id', 'started_at', 'ended_at', 'exception', 'summary']
    const small = await query({ columns, include_costs: true, include_storage_size: true })
    const full = await query({ include_costs: true, include_storage_size: true })

    // Assess
    expect(small.length).toBe(full.length)
    expect(small.length).toBeGreaterThan(0)
    small.forEach((call, i) => {
      const whole = full[i] as Record<string, unknown>
      expect(call.inputs).toEqual({})
      for (const key of [...columns, 'storage_size_bytes']) expect([key, call[key]]).toEqual([key, whole[key]])
    })
  })

  it('returns storage sizes: the call own size and the whole trace on roots', async () => {
    // Prepare
    // Weave's length(json.dumps(v)) per JSON column (docs/tracing.md §7.6).
    const size = (v: unknown) => pythonDumpsInOrder(v).length
    const aSize = size({}) + size({ x: 5, name: 'Hello World', tags: [1, 2] }) + size('fine') + size({})
    const bSize = size({}) + size({ x: '12', name: 'hello-there' }) + size(null) + size({})

    // Act
    const calls = await query({
      filter: { trace_ids: ['ta'] },
      include_storage_size: true,
      include_total_storage_size: true,
    })

    // Assess
    expect(calls.map((c) => [c.storage_size_bytes, c.total_storage_size_bytes])).toEqual([
      [aSize, aSize + bSize],
      [bSize, null],
    ])
  })

  it.each([
    [{ query: { $expr: { $nope: [] } } }],
    [{ query: { $expr: { $eq: [lit(1)] } } }],
    [{ query: { $expr: lit(true) } }],
    [{ query: { $expr: { $eq: [lit(1), lit(1)] }, extra: 1 } }],
    [{ sort_by: [{ field: 'x', direction: 'up' }] }],
    [{ limit: 'ten' }],
  ])('answers 422 for %j', async (body) => {
    const res = await app.request('/calls/stream_query', jsonInit({ project_id: fx.project, ...body }, fx.caller.basic))
    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: unknown[] }).detail.length).toBeGreaterThan(0)
  })

  it('answers 400 for a non-string $contains needle and 422 for an unknown field', async () => {
    const needle = await app.request(
      '/calls/stream_query',
      jsonInit(
        { project_id: fx.project, query: { $expr: { $contains: { input: get('inputs.name'), substr: lit(5) } } } },
        fx.caller.basic,
      ),
    )
    const field = await app.request(
      '/calls/stream_query',
      jsonInit({ project_id: fx.project, query: { $expr: { $eq: [get('nope'), lit(1)] } } }, fx.caller.basic),
    )
    expect(needle.status).toBe(400)
    expect(field.status).toBe(422)
    expect(await field.json()).toEqual({ reason: 'Field nope is not allowed' })
  })

  it('reads a literal written 2.0 or 2e0 as a float, as pydantic does, so the field compares as a double', async () => {
    // Prepare: the body's own text, since JSON.stringify writes 2.0 as 2.
    const bodyWith = (literal: string) =>
      `{"project_id":${JSON.stringify(fx.project)},` +
      `"query":{"$expr":{"$gt":[{"$getField":"inputs.x"},{"$literal":${literal}}]}}}`
    const send = async (literal: string) => {
      const init = { ...jsonInit({}, fx.caller.basic), body: bodyWith(literal) }
      const res = await app.request('/calls/stream_query', init)
      return (await res.text())
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as { id: string }).id)
    }

    // Act
    const float = await send('2.0')
    const exponent = await send('2e0')
    const int = await send('2')

    // Assess: c's 2.5 is above 2.0 as a double; as an int it is not an integer at all (NULL).
    expect(float).toEqual([fx.a, fx.b, fx.c])
    expect(exponent).toEqual([fx.a, fx.b, fx.c])
    expect(int).toEqual([fx.a, fx.b])
  })

  it('answers 400 for a negative limit or offset and nothing for limit 0, as the reference', async () => {
    // Act
    const limit = await app.request(
      '/calls/stream_query',
      jsonInit({ project_id: fx.project, limit: -1 }, fx.caller.basic),
    )
    const offset = await app.request(
      '/calls/stream_query',
      jsonInit({ project_id: fx.project, offset: -1 }, fx.caller.basic),
    )

    // Assess
    expect([limit.status, await limit.json()]).toEqual([400, { reason: 'Limit must be a positive integer' }])
    expect([offset.status, await offset.json()]).toEqual([400, { reason: 'Offset must be a positive integer' }])
    expect(await ids({ limit: 0 })).toEqual([])
  })

  it('answers 422 for a column that names no call field, checked on its first path segment', async () => {
    // Act
    const bogus = await app.request(
      '/calls/stream_query',
      jsonInit({ project_id: fx.project, columns: ['id', 'bogus'] }, fx.caller.basic),
    )
    const nested = await app.request(
      '/calls/stream_query',
      jsonInit({ project_id: fx.project, columns: ['feedback.[*].payload'] }, fx.caller.basic),
    )
    const none = await app.request(
      '/calls/stream_query',
      jsonInit({ project_id: fx.project, columns: ['bogus'], filter: { call_ids: ['missing'] } }, fx.caller.basic),
    )
    const allowed = await query({
      columns: ['summary.weave.status', 'inputs.x', 'storage_size_bytes', 'output_dump'],
      filter: { call_ids: [fx.a] },
    })

    // Assess: the reference adds each column's first segment as a field (`get_field_by_name`).
    expect([bogus.status, await bogus.json()]).toEqual([422, { reason: 'Field bogus is not allowed' }])
    expect([nested.status, await nested.json()]).toEqual([422, { reason: 'Field feedback is not allowed' }])
    expect([none.status, await none.json()]).toEqual([422, { reason: 'Field bogus is not allowed' }])
    expect(allowed.map((c) => [c.inputs, c.output, (c.summary as { weave: { status: string } }).weave.status])).toEqual(
      [[{ x: 5, name: 'Hello World', tags: [1, 2] }, 'fine', 'success']],
    )
  })

  it("answers 403 for another entity's project", async () => {
    const stranger = await newCaller()
    const res = await app.request('/calls/stream_query', jsonInit({ project_id: fx.project }, stranger.basic))
    expect(res.status).toBe(403)
  })
})

describe('POST /calls/stream_query as a streaming Lambda', () => {
  it('streams JSON Lines into the response stream behind the REST authorizer', async () => {
    // Prepare
    const chunks: Buffer[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(Buffer.from(chunk))
        done()
      },
    })
    const event = restEvent({
      method: 'POST',
      path: '/calls/stream_query',
      headers: { 'content-type': 'application/json', ...fx.caller.basic },
      body: JSON.stringify({ project_id: fx.project, columns: ['id'] }),
      authorizer: authorizerFor(fx.caller),
    })
    const invoke = handler as unknown as (e: unknown, s: Writable, c: unknown) => Promise<void>

    // Act
    await invoke(event, stream, lambdaContext())

    // Assess
    const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n')
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([fx.a, fx.b, fx.c])
  })
})

describe('POST /calls/stream_query over many calls', () => {
  it('merges the sharded timeline and root indexes in started_at order for limit and offset', async () => {
    // Prepare
    const caller = await newCaller()
    const project = `${caller.entity}/many`
    const calls = Array.from({ length: 40 }, (_, i) => ({
      id: randomUUID(),
      second: String(i).padStart(2, '0'),
      parent: i % 3 === 0 ? null : 'p',
    }))
    const shuffled = [...calls].sort((a, b) => a.id.localeCompare(b.id))
    await writeCalls(
      caller,
      shuffled.map((c) => ({
        start: startPart(project, { id: c.id, parent_id: c.parent, started_at: `2025-01-01T00:00:${c.second}Z` }),
      })),
    )
    const list = async (body: Record<string, unknown>) => {
      const res = await app.request('/calls/stream_query', jsonInit({ project_id: project, ...body }, caller.basic))
      return (await res.text())
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id)
    }

    // Act
    const page = await list({ offset: 10, limit: 5 })
    const roots = await list({ filter: { trace_roots_only: true }, limit: 4 })
    const all = await list({})

    // Assess
    expect(page).toEqual(calls.slice(10, 15).map((c) => c.id))
    expect(roots).toEqual(
      calls
        .filter((c) => c.parent === null)
        .slice(0, 4)
        .map((c) => c.id),
    )
    expect(all).toEqual(calls.map((c) => c.id))
  })

  it('serves newest first with limit and offset from a backward walk, ties on started_at in id order', async () => {
    // Prepare: 60 calls over 12 distinct seconds (five calls share each), in shards of every kind; some deleted
    // by a query filter (op name), some roots.
    const caller = await newCaller()
    const project = `${caller.entity}/newest`
    const calls = Array.from({ length: 60 }, (_, i) => ({
      id: randomUUID(),
      second: String(Math.floor(i / 5)).padStart(2, '0'),
      op: i % 4 === 0 ? 'weave:///e/p/op/other:abc' : 'weave:///e/p/op/my_op:abc',
      parent: i % 3 === 0 ? null : 'p',
    }))
    await writeCalls(
      caller,
      calls.map((c) => ({
        start: startPart(project, {
          id: c.id,
          op_name: c.op,
          parent_id: c.parent,
          started_at: `2025-01-01T00:00:${c.second}Z`,
        }),
      })),
    )
    const list = async (body: Record<string, unknown>) => {
      const res = await app.request('/calls/stream_query', jsonInit({ project_id: project, ...body }, caller.basic))
      const text = (await res.text()).trim()
      return text === '' ? [] : text.split('\n').map((l) => (JSON.parse(l) as { id: string }).id)
    }
    const newest = [{ field: 'started_at', direction: 'desc' }]
    const query = { $expr: { $eq: [{ $getField: 'op_name' }, { $literal: 'weave:///e/p/op/my_op:abc' }] } }
    const expected = (keep: (c: (typeof calls)[number]) => boolean) =>
      calls
        .filter(keep)
        .sort((a, b) => b.second.localeCompare(a.second) || a.id.localeCompare(b.id))
        .map((c) => c.id)

    // Act
    const first = await list({ sort_by: newest, limit: 7 })
    const paged = await list({ sort_by: newest, offset: 13, limit: 9 })
    const queried = await list({ sort_by: newest, query, limit: 11 })
    const roots = await list({ sort_by: newest, filter: { trace_roots_only: true }, offset: 2, limit: 3 })
    const pastTheEnd = await list({ sort_by: newest, offset: 58, limit: 10 })
    const unlimited = await list({ sort_by: newest })

    // Assess
    const all = expected(() => true)
    expect(unlimited).toEqual(all)
    expect(first).toEqual(all.slice(0, 7))
    expect(paged).toEqual(all.slice(13, 22))
    expect(queried).toEqual(expected((c) => c.op.includes('my_op')).slice(0, 11))
    expect(roots).toEqual(expected((c) => c.parent === null).slice(2, 5))
    expect(pastTheEnd).toEqual(all.slice(58))
  })
})

// Counts the index items the Query requests of `act` return (the real client, with a counting middleware).
async function itemsQueried<T>(act: () => Promise<T>): Promise<{ result: T; items: number }> {
  let items = 0
  const name = `count-query-${randomUUID()}`
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args)
      if (context.commandName === 'QueryCommand') {
        items += ((out.output as { Items?: unknown[] }).Items ?? []).length
      }
      return out
    },
    { step: 'initialize', name },
  )
  try {
    return { result: await act(), items }
  } finally {
    db().middlewareStack.remove(name)
  }
}

describe('POST /calls/stream_query over one large trace', () => {
  it('pages a trace by id with a limit and an id lower bound, reading about one page of the trace index', async () => {
    // Prepare: 300 calls of one trace (random ids, so id order differs from start order), 60 of them still running.
    // The caller's key stays cached throughout, so the two measured requests read the same items: on a busy host the
    // pages between them can outlast the default 5 s cache and add the key's membership read to the second.
    config.authCacheTtlMs = 10 * 60_000
    const caller = await newCaller()
    const project = `${caller.entity}/trace-pages`
    const traceId = randomUUID()
    const calls = Array.from({ length: 300 }, (_, i) => ({
      id: randomUUID(),
      second: String(i % 60).padStart(2, '0'),
      ended: i % 5 !== 0,
    }))
    await writeCalls(
      caller,
      calls.map((c, i) => ({
        start: startPart(project, {
          id: c.id,
          trace_id: traceId,
          parent_id: i === 0 ? null : calls[0]?.id,
          started_at: `2025-01-01T00:00:${c.second}Z`,
        }),
        ...(c.ended ? { end: endPart(project, c.id, { ended_at: `2025-01-01T00:01:${c.second}Z` }) } : {}),
      })),
    )
    const byId = calls.map((c) => c.id).sort()
    const page = async (after: string | undefined) => {
      const body = {
        project_id: project,
        filter: { trace_ids: [traceId] },
        sort_by: [{ field: 'id', direction: 'asc' }],
        limit: 40,
        columns: ['id', 'parent_id', 'started_at', 'ended_at'],
        ...(after === undefined ? {} : { query: { $expr: { $gt: [get('id'), lit(after)] } } }),
      }
      const res = await app.request('/calls/stream_query', jsonInit(body, caller.basic))
      const text = (await res.text()).trim()
      return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as { id: string; ended_at: string | null })
    }

    // Act
    const first = await itemsQueried(() => page(undefined))
    const all = [...first.result]
    for (let next = await page(all.at(-1)?.id); next.length > 0; next = await page(all.at(-1)?.id)) all.push(...next)
    const unlimited = await itemsQueried(() => page(undefined).then(() => undefined))

    // Assess
    expect(first.result.map((c) => c.id)).toEqual(byId.slice(0, 40))
    expect(all.map((c) => c.id)).toEqual(byId)
    const ended = new Map<string, boolean>(calls.map((c) => [c.id, c.ended]))
    expect(all.every((c) => (c.ended_at !== null) === ended.get(c.id))).toBe(true)
    // Two index items a call: the first page reads about 80 of the trace's 540, not all of them.
    expect(first.items).toBeLessThan(200)
    expect(unlimited.items).toBe(first.items)
  })

  it('orders ids the trace index sorts differently (below "$", past U+D7FF) exactly by id', async () => {
    // Prepare
    const caller = await newCaller()
    const project = `${caller.entity}/odd-ids`
    const traceId = randomUUID()
    const ids = ['a', 'a#A', 'a!', 'a#', 'a b', 'ab', 'b', 'b\ue000', 'b\ud83d\ude00', 'c', 'c$', 'd']
    await writeCalls(
      caller,
      ids.map((id) => ({ start: startPart(project, { id, trace_id: traceId }), end: endPart(project, id) })),
    )
    const list = async (body: Record<string, unknown>) => {
      const res = await app.request(
        '/calls/stream_query',
        jsonInit(
          {
            project_id: project,
            filter: { trace_ids: [traceId] },
            sort_by: [{ field: 'id', direction: 'asc' }],
            ...body,
          },
          caller.basic,
        ),
      )
      const text = (await res.text()).trim()
      return text === '' ? [] : text.split('\n').map((l) => (JSON.parse(l) as { id: string }).id)
    }
    const sorted = [...ids].sort()

    // Act
    const whole = await list({})
    const firstFive = await list({ limit: 5 })
    const afterA = await list({ limit: 4, query: { $expr: { $gt: [get('id'), lit('a')] } } })
    const afterB = await list({ query: { $expr: { $gte: [get('id'), lit('b')] } } })

    // Assess
    expect(whole).toEqual(sorted)
    expect(firstFive).toEqual(sorted.slice(0, 5))
    expect(afterA).toEqual(sorted.filter((id) => id > 'a').slice(0, 4))
    expect(afterB).toEqual(sorted.filter((id) => id >= 'b'))
  })
})
