import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as deleteApp } from '#functions/tracing/delete-calls/handler'
import { app, handler } from '#functions/tracing/query-call-stats/handler'
import { db } from '#shared/db/client'
import { pythonDumpsInOrder } from '#shared/tracing/digest'
import { jsonInit, newCaller } from '../../support/auth.js'
import { type CallFixture, callFixture } from '../../support/call-fixture.js'
import { authorizerFor, endPart, newProject, startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'

let fx: CallFixture

beforeAll(async () => {
  fx = await callFixture()
})

async function stats(body: Record<string, unknown>, project = fx.project, headers = fx.caller.basic) {
  const res = await app.request('/calls/query_stats', jsonInit({ project_id: project, ...body }, headers))
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('POST /calls/query_stats', () => {
  it('counts live calls from the counter and reports has_more past the limit', async () => {
    expect(await stats({})).toEqual({
      status: 200,
      body: { count: 3, has_more: false, total_storage_size_bytes: null },
    })
    expect((await stats({ limit: 2 })).body).toEqual({ count: 2, has_more: true, total_storage_size_bytes: null })
    expect((await stats({ limit: 3 })).body).toEqual({ count: 3, has_more: false, total_storage_size_bytes: null })
    expect((await stats({ limit: 0 })).body).toEqual({ count: 0, has_more: true, total_storage_size_bytes: null })
  })

  it('counts a filter and a query, capped at the limit', async () => {
    const alpha = { op_names: ['weave:///e/p/op/alpha:*'] }
    expect((await stats({ filter: alpha })).body).toMatchObject({ count: 2, has_more: false })
    expect((await stats({ filter: alpha, limit: 1 })).body).toMatchObject({ count: 1, has_more: true })
    const running = { $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'running' }] } }
    expect((await stats({ query: running })).body).toMatchObject({ count: 1, has_more: false })
    expect((await stats({ filter: { thread_ids: [] } })).body).toMatchObject({ count: 0, has_more: false })
  })

  it('sums whole-trace storage over matching root calls', async () => {
    // Prepare
    // Weave's length(json.dumps(v)) per JSON column (docs/tracing.md §7.6).
    const size = (v: unknown) => pythonDumpsInOrder(v).length
    const traceA =
      size({}) +
      size({ x: 5, name: 'Hello World', tags: [1, 2] }) +
      size('fine') +
      size({}) +
      (size({}) + size({ x: '12', name: 'hello-there' }) + size(null) + size({}))
    const traceC = size({}) + size({ x: 2.5, ref: 'weave:///e/p/object/ds:abc' })

    // Act
    const res = await stats({ include_total_storage_size: true })

    // Assess
    expect(res.body).toEqual({ count: 3, has_more: false, total_storage_size_bytes: traceA + traceC })
  })

  it('answers the limit-1 existence probe including deleted calls only when the filter is absent', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const id = randomUUID()
    await writeCalls(caller, [{ start: startPart(project, { id }) }])
    await deleteApp.request('/calls/delete', jsonInit({ project_id: project, call_ids: [id] }, caller.basic))

    // Act
    const probe = await stats({ limit: 1 }, project, caller.basic)
    const nullFilter = await stats({ limit: 1, filter: null }, project, caller.basic)
    const emptyFilter = await stats({ limit: 1, filter: {} }, project, caller.basic)
    const emptyLists = await stats({ limit: 1, filter: { op_names: [], call_ids: [] } }, project, caller.basic)
    const count = await stats({}, project, caller.basic)
    const empty = await stats({ limit: 1 }, newProject(caller), caller.basic)

    // Assess
    expect(probe.body).toEqual({ count: 1, has_more: false, total_storage_size_bytes: null })
    expect(nullFilter.body).toEqual({ count: 1, has_more: false, total_storage_size_bytes: null })
    // A filter that is present, even empty, is not the probe: deleted calls are not counted.
    expect(emptyFilter.body).toEqual({ count: 0, has_more: false, total_storage_size_bytes: null })
    expect(emptyLists.body).toEqual({ count: 0, has_more: false, total_storage_size_bytes: null })
    expect(count.body).toEqual({ count: 0, has_more: false, total_storage_size_bytes: null })
    expect(empty.body).toEqual({ count: 0, has_more: false, total_storage_size_bytes: null })
  })

  it('reports has_more exactly: false when the matches equal the limit, probes included', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const run = { wb_run_id: `${project}/run1` }
    await writeCalls(caller, [{ start: startPart(project, run) }])
    const two = newProject(caller)
    await writeCalls(caller, [{ start: startPart(two, run) }, { start: startPart(two, run) }])
    const never = { $expr: { $eq: [{ $getField: 'op_name' }, { $literal: 'no-such-op' }] } }
    const mine = { op_names: ['weave:///e/p/op/my_op:*'] }

    // Act
    const oneProbe = await stats({ limit: 1 }, project, caller.basic)
    const twoProbe = await stats({ limit: 1 }, two, caller.basic)
    const oneRuns = await stats({ limit: 1, query: never }, project, caller.basic)
    const twoRuns = await stats({ limit: 1, query: never }, two, caller.basic)
    const atLimit = await stats({ limit: 2, filter: mine }, two, caller.basic)
    const pastLimit = await stats({ limit: 1, filter: mine }, two, caller.basic)
    const counterAtLimit = await stats({ limit: 2 }, two, caller.basic)

    // Assess
    expect(oneProbe.body).toMatchObject({ count: 1, has_more: false })
    expect(twoProbe.body).toMatchObject({ count: 1, has_more: true })
    expect(oneRuns.body).toMatchObject({ count: 1, has_more: false })
    expect(twoRuns.body).toMatchObject({ count: 1, has_more: true })
    expect(atLimit.body).toMatchObject({ count: 2, has_more: false })
    expect(pastLimit.body).toMatchObject({ count: 1, has_more: true })
    expect(counterAtLimit.body).toMatchObject({ count: 2, has_more: false })
  })

  it('counts roots from their start parts alone: ended and running roots, deleted ones left out, no end read', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const [ended, running, deleted, child] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    await writeCalls(caller, [
      { start: startPart(project, { id: ended, trace_id: ended }), end: endPart(project, ended) },
      { start: startPart(project, { id: running, trace_id: running }) },
      { start: startPart(project, { id: deleted, trace_id: deleted }), end: endPart(project, deleted) },
      { start: startPart(project, { id: child, trace_id: ended, parent_id: ended }), end: endPart(project, child) },
    ])
    await deleteApp.request('/calls/delete', jsonInit({ project_id: project, call_ids: [deleted] }, caller.basic))
    const endKeys: string[] = []
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const input = (args as { input: Record<string, unknown> }).input
        if (context.commandName?.startsWith('BatchGet')) {
          const requests = Object.values(input.RequestItems as Record<string, { Keys: { SK: string }[] }>)
          endKeys.push(...requests.flatMap((r) => r.Keys.filter((k) => k.SK === 'E').map((k) => k.SK)))
        }
        return next(args)
      },
      { step: 'initialize', name: 'recordEndReads' },
    )

    // Act
    let roots: Awaited<ReturnType<typeof stats>>
    let capped: Awaited<ReturnType<typeof stats>>
    try {
      roots = await stats({ filter: { trace_roots_only: true } }, project, caller.basic)
      capped = await stats({ filter: { trace_roots_only: true }, limit: 1 }, project, caller.basic)
    } finally {
      db().middlewareStack.remove('recordEndReads')
    }

    // Assess
    expect(roots.body).toEqual({ count: 2, has_more: false, total_storage_size_bytes: null })
    expect(capped.body).toEqual({ count: 1, has_more: true, total_storage_size_bytes: null })
    expect(endKeys).toEqual([])
  })

  it('answers the runs-linked probe: limit 1 with a query and an absent or all-null filter ignores the query', async () => {
    const never = { $expr: { $eq: [{ $getField: 'op_name' }, { $literal: 'no-such-op' }] } }
    expect((await stats({ limit: 1, query: never, filter: {} })).body).toMatchObject({ count: 1 })
    expect((await stats({ limit: 1, query: never })).body).toMatchObject({ count: 1 })
    expect((await stats({ limit: 1, query: never, filter: { op_names: null } })).body).toMatchObject({ count: 1 })
    // An empty list is a criterion for `_is_minimal_filter`, so the query applies.
    expect((await stats({ limit: 1, query: never, filter: { op_names: [] } })).body).toMatchObject({ count: 0 })
    expect((await stats({ limit: 2, query: never })).body).toMatchObject({ count: 0 })
  })

  it('answers 400 for a negative limit and 403 for a foreign project', async () => {
    const stranger = await newCaller()
    for (const body of [
      { limit: -1 },
      { limit: -1, filter: { op_names: ['x'] } },
      { limit: -5, query: { $expr: { $eq: [{ $getField: 'op_name' }, { $literal: 'x' }] } } },
    ]) {
      expect(await stats(body)).toEqual({
        status: 400,
        body: { reason: 'Limit must be greater than or equal to 0' },
      })
    }
    expect((await stats({}, fx.project, stranger.basic)).status).toBe(403)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/calls/query_stats',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ count: 0, has_more: false, total_storage_size_bytes: null })
  })
})
