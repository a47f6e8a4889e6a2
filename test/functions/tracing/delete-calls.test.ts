import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/tracing/delete-calls/handler'
import { app as readApp } from '#functions/tracing/read-call/handler'
import { readCallCount } from '#shared/db/call-counter'
import { allShards, deletedCallsPk } from '#shared/db/call-keys'
import { queryAll } from '#shared/db/query'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, newProject, startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { watchDynamoInFlight } from '../../support/hold-dynamo.js'

describe('POST /calls/delete', () => {
  it('soft-deletes calls with all descendants, counts them once and decrements the project count once', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const [root, child, leaf, other] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    await writeCalls(caller, [
      { start: startPart(project, { id: root, trace_id: 't' }) },
      { start: startPart(project, { id: child, trace_id: 't', parent_id: root }) },
      { start: startPart(project, { id: leaf, trace_id: 't', parent_id: child }) },
      { start: startPart(project, { id: other, trace_id: 'u' }) },
    ])

    // Act
    const res = await app.request('/calls/delete', jsonInit({ project_id: project, call_ids: [child] }, caller.basic))
    const retry = await app.request('/calls/delete', jsonInit({ project_id: project, call_ids: [child] }, caller.basic))
    const readLeaf = await readApp.request('/call/read', jsonInit({ project_id: project, id: leaf }, caller.basic))

    // Assess
    expect(await res.json()).toEqual({ num_deleted: 2 })
    expect(await retry.json()).toEqual({ num_deleted: 0 })
    expect(await readLeaf.json()).toEqual({ call: null })
    expect(await readCallCount(project)).toBe(2)
  })

  it('writes one deletion marker per call it reaches, and a retried delete writes none more', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const [root, child, leaf] = [randomUUID(), randomUUID(), randomUUID()]
    await writeCalls(caller, [
      { start: startPart(project, { id: root, trace_id: 't' }) },
      { start: startPart(project, { id: child, trace_id: 't', parent_id: root }) },
      { start: startPart(project, { id: leaf, trace_id: 't', parent_id: child }) },
    ])
    const markers = async () => {
      const pages = await Promise.all(
        allShards((shard) => deletedCallsPk(project, shard)).map((pk) =>
          queryAll({
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': pk },
            ConsistentRead: true,
          }),
        ),
      )
      return pages.flat().map((item) => String(item.SK))
    }

    // Act
    const body = { project_id: project, call_ids: [child, randomUUID()] }
    await app.request('/calls/delete', jsonInit(body, caller.basic))
    const first = await markers()
    const retry = await app.request('/calls/delete', jsonInit(body, caller.basic))
    const again = await markers()

    // Assess
    expect(first.sort()).toEqual([child, leaf].sort())
    expect(await retry.json()).toEqual({ num_deleted: 0 })
    expect(again.sort()).toEqual(first.sort())
  })

  it('deletes a root with many descendants with at most 16 DynamoDB writes in flight', async () => {
    // Prepare: one write per call reached; sent all at once, a trace of thousands queued on the SDK's socket pool
    // past its connect timeout and answered 503 (QA: a root with 1,500 children, on dynalite and DynamoDB Local).
    const caller = await newCaller()
    const project = newProject(caller)
    const root = randomUUID()
    const children = Array.from({ length: 120 }, () => randomUUID())
    await writeCalls(caller, [
      { start: startPart(project, { id: root, trace_id: 't' }) },
      ...children.map((id) => ({ start: startPart(project, { id, trace_id: 't', parent_id: root }) })),
    ])
    const watch = watchDynamoInFlight((c) => c.name === 'UpdateItemCommand')

    // Act
    let res: Response
    try {
      res = await app.request('/calls/delete', jsonInit({ project_id: project, call_ids: [root] }, caller.basic))
    } finally {
      watch.stop()
    }

    // Assess
    expect(await res.json()).toEqual({ num_deleted: 121 })
    expect(watch.max()).toBeGreaterThan(1)
    expect(watch.max()).toBeLessThanOrEqual(16)
    expect(await readCallCount(project)).toBe(0)
  })

  it('answers 413 for more than 1000 ids and 403 for a foreign project', async () => {
    const caller = await newCaller()
    const stranger = await newCaller()
    const project = newProject(caller)
    const ids = Array.from({ length: 1001 }, (_, i) => `c${i}`)
    const big = await app.request('/calls/delete', jsonInit({ project_id: project, call_ids: ids }, caller.basic))
    expect(big.status).toBe(413)
    expect(await big.json()).toEqual({ reason: 'Request too large' })
    expect(
      (await app.request('/calls/delete', jsonInit({ project_id: project, call_ids: [] }, stranger.basic))).status,
    ).toBe(403)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/calls/delete',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project, call_ids: [] }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ num_deleted: 0 })
  })
})
