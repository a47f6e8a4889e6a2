import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as deleteCalls } from '#functions/tracing/delete-calls/handler'
import { app as endCall } from '#functions/tracing/end-call/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app as readCall } from '#functions/tracing/read-call/handler'
import { app as startCall } from '#functions/tracing/start-call/handler'
import { app as streamQuery } from '#functions/tracing/stream-query-calls/handler'
import { app as updateCall } from '#functions/tracing/update-call/handler'
import { app as upsertBatch } from '#functions/tracing/upsert-call-batch/handler'
import { countCalls, readCallCount } from '#shared/db/call-counter'
import { putStartsIfAbsent } from '#shared/db/call-repository'
import { UNAVAILABLE_MESSAGE } from '#shared/errors/error-response'
import { recheckDeferred, rollBackStarts } from '#shared/tracing/call-count'
import { jsonInit } from '../support/auth.js'
import { endPart, startPart } from '../support/calls.js'
import { type DynamoFaultProxy, useDynamoFaultProxy } from '../support/dynamo-fault-proxy.js'
import { newProjectCaller, type ProjectCaller, send } from '../support/tracing.js'

// The unfiltered calls/query_stats count is a counter kept beside the call items, not a count of them: these tests
// check it matches what is stored when writes fail part-way, when answers are lost and when requests are retried.

let proxy: DynamoFaultProxy
useDynamoFaultProxy((started) => {
  proxy = started
})

const calls = (caller: ProjectCaller, ids: string[], withEnds = true) =>
  ids.flatMap((id, i) => [
    { mode: 'start', req: { start: startPart(caller.project, { id, inputs: { i } }) } },
    ...(withEnds ? [{ mode: 'end', req: { end: endPart(caller.project, id, { output: i }) } }] : []),
  ])

async function count(caller: ProjectCaller): Promise<number> {
  const res = await send(statsApp, '/calls/query_stats', { project_id: caller.project }, caller)
  expect(res.status).toBe(200)
  return res.body.count
}

async function stored(caller: ProjectCaller): Promise<string[]> {
  const res = await streamQuery.request('/calls/stream_query', jsonInit({ project_id: caller.project }, caller.basic))
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { id: string }).id)
    .sort()
}

describe('call/upsert_batch and call/start that fail after counting', () => {
  it('count nothing when every BatchWriteItem answers 503, and a retry counts each call once', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const ids = [randomUUID(), randomUUID(), randomUUID()]
    await count(caller) // warms the key cache
    proxy.inject({ fault: 'unavailable', operations: ['BatchWriteItem'] })

    // Act
    const failed = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids) }, caller)
    proxy.clear()
    const afterFailure = { count: await count(caller), stored: await stored(caller) }
    const retried = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids) }, caller)
    const again = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids) }, caller)

    // Assess
    expect(failed).toEqual({ status: 503, body: { reason: UNAVAILABLE_MESSAGE } })
    expect(afterFailure).toEqual({ count: 0, stored: [] })
    expect([retried.status, again.status]).toEqual([200, 200])
    expect(await count(caller)).toBe(3)
    expect(await stored(caller)).toEqual([...ids].sort())
  })

  it('call/start: counts nothing when its write fails, and once when retried', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = randomUUID()
    await count(caller)
    proxy.inject({ fault: 'throttling', operations: ['BatchWriteItem'] })

    // Act
    const failed = await send(startCall, '/call/start', { start: startPart(caller.project, { id }) }, caller)
    proxy.clear()
    const afterFailure = await count(caller)
    const retried = await send(startCall, '/call/start', { start: startPart(caller.project, { id }) }, caller)

    // Assess
    expect(failed.status).toBe(503)
    expect(afterFailure).toBe(0)
    expect(retried.status).toBe(200)
    expect(await count(caller)).toBe(1)
  })

  it('keep counting the starts stored by the BatchWriteItem that succeeded, and only those', async () => {
    // Prepare: 30 starts are two BatchWriteItem requests (25 and 5); the second one fails.
    const caller = await newProjectCaller()
    const ids = Array.from({ length: 30 }, () => randomUUID())
    await count(caller)
    proxy.inject({ fault: 'unavailable', operations: ['BatchWriteItem'], skip: 1 })

    // Act
    const failed = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids, false) }, caller)
    proxy.clear()
    const afterFailure = { count: await count(caller), stored: (await stored(caller)).length }
    const retried = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids, false) }, caller)

    // Assess
    expect(failed.status).toBe(503)
    expect(afterFailure).toEqual({ count: 25, stored: 25 })
    expect(retried.status).toBe(200)
    expect(await count(caller)).toBe(30)
    expect(await stored(caller)).toEqual([...ids].sort())
  })

  it('count what a slow sibling BatchWriteItem stored after the other one failed: the rollback waits for it', async () => {
    // Prepare: of the two BatchWriteItem requests (25 and 5 starts) the first one to arrive is slow to apply (as
    // DynamoDB Local is), the other fails; the rollback must not read what is stored before the slow one is done.
    const caller = await newProjectCaller()
    const ids = Array.from({ length: 30 }, () => randomUUID())
    await count(caller)
    proxy.inject({ fault: { delayMs: 400 }, operations: ['BatchWriteItem'], times: 1 })
    proxy.inject({ fault: 'unavailable', operations: ['BatchWriteItem'] })

    // Act
    const failed = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids, false) }, caller)
    proxy.clear()
    const afterFailure = { count: await count(caller), stored: (await stored(caller)).length }

    // Assess
    expect(failed.status).toBe(503)
    expect([5, 25]).toContain(afterFailure.stored)
    expect(afterFailure.count).toBe(afterFailure.stored)
  })

  it('count a start once when the answer of its write and of its counter update are lost', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const ids = [randomUUID(), randomUUID()]
    await count(caller)
    proxy.inject({ fault: 'drop-after-apply', operations: ['BatchWriteItem'], times: 1 })
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 2 })

    // Act
    const res = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids) }, caller)
    proxy.clear()
    const retried = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids) }, caller)

    // Assess
    expect([res.status, retried.status]).toEqual([200, 200])
    expect(await count(caller)).toBe(2)
  })
})

describe('a failed attempt racing its own retry', () => {
  // The start part a retry stores for a call whose token another attempt holds.
  const startItem = (caller: ProjectCaller, id: string) => ({
    project_id: caller.project,
    id,
    op_name: 'op',
    trace_id: id,
    started_at: '2025-01-01T00:00:00.000000Z',
    attributes: { json: '{}' },
    inputs: { json: '{}' },
    wb_user_id: caller.userId,
    size: 4,
  })

  it('counts a start the retry stored while the failed attempt held its token, once that attempt gives it back', async () => {
    // Prepare: the first attempt counted the call, then the retry found its token pending and stored the start
    // without counting it.
    const caller = await newProjectCaller()
    const id = randomUUID()
    const first = await countCalls(caller.project, [`+${id}`], 1)
    await putStartsIfAbsent([startItem(caller, id)])

    // Act: the first attempt's write fails; it takes its count back and finds the retry's start.
    await rollBackStarts(caller.project, first, new Set())

    // Assess
    expect(await readCallCount(caller.project)).toBe(1)
    expect(await stored(caller)).toEqual([id])
  })

  it('counts a start the retry stored after the failed attempt gave its token back and looked', async () => {
    // Prepare: the first attempt counted, failed, took its count back and found nothing stored.
    const caller = await newProjectCaller()
    const id = randomUUID()
    const first = await countCalls(caller.project, [`+${id}`], 1)
    await rollBackStarts(caller.project, first, new Set())

    // Act: the retry, which found the token pending before that, stores the start now and checks the token.
    const created = await putStartsIfAbsent([startItem(caller, id)])
    await recheckDeferred(caller.project, created)
    await recheckDeferred(caller.project, created)

    // Assess
    expect(await readCallCount(caller.project)).toBe(1)
  })

  it('leaves a start alone while its token is still held: the holder counts it', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = randomUUID()
    const holder = await countCalls(caller.project, [`+${id}`], 1)

    // Act
    const created = await putStartsIfAbsent([startItem(caller, id)])
    await recheckDeferred(caller.project, created)
    const whileHeld = await readCallCount(caller.project)
    await rollBackStarts(caller.project, holder, new Set())

    // Assess
    expect(whileHeld).toBe(1)
    expect(await readCallCount(caller.project)).toBe(1)
  })
})

describe('calls/delete whose counter write fails or whose answer is lost', () => {
  async function startOne(caller: ProjectCaller): Promise<string> {
    const id = randomUUID()
    const res = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, [id], false) }, caller)
    expect(res.status).toBe(200)
    return id
  }

  it('uncounts the call when the retry of a delete whose counter write failed comes in', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = await startOne(caller)
    expect(await count(caller)).toBe(1)
    // The first UpdateItem is the delete mark; every later one (the counter) fails.
    proxy.inject({ fault: 'unavailable', operations: ['UpdateItem'], skip: 1 })

    // Act
    const failed = await send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [id] }, caller)
    proxy.clear()
    const retried = await send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [id] }, caller)
    const again = await send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [id] }, caller)

    // Assess
    expect(failed.status).toBe(503)
    expect(retried).toEqual({ status: 200, body: { num_deleted: 0 } })
    expect(again).toEqual({ status: 200, body: { num_deleted: 0 } })
    expect(await count(caller)).toBe(0)
    expect(await stored(caller)).toEqual([])
  })

  it('uncounts once and reports the call deleted when the answer of the delete mark is lost', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = await startOne(caller)
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 1 })

    // Act
    const res = await send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [id] }, caller)
    proxy.clear()
    const retried = await send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [id] }, caller)

    // Assess
    expect(res).toEqual({ status: 200, body: { num_deleted: 1 } })
    expect(retried).toEqual({ status: 200, body: { num_deleted: 0 } })
    expect(await count(caller)).toBe(0)
  })

  it('never uncounts twice when every write after the counter update fails and the delete is retried', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const [id, other] = [await startOne(caller), await startOne(caller)]
    // UpdateItems: the mark, the counter update, then the mark's clearing and the token release fail.
    proxy.inject({ fault: 'unavailable', operations: ['UpdateItem'], skip: 2 })

    // Act
    const failed = await send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [id] }, caller)
    proxy.clear()
    const retried = await send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [id] }, caller)

    // Assess
    expect(failed.status).toBe(503)
    expect(retried.status).toBe(200)
    expect(await count(caller)).toBe(1)
    expect(await stored(caller)).toEqual([other])
  })

  it('uncounts a child once when its parent and the child are deleted by two concurrent requests', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const [root, child] = [randomUUID(), randomUUID()]
    const batch = [
      { mode: 'start', req: { start: startPart(caller.project, { id: root, trace_id: root }) } },
      { mode: 'start', req: { start: startPart(caller.project, { id: child, trace_id: root, parent_id: root }) } },
    ]
    await send(upsertBatch, '/call/upsert_batch', { batch }, caller)

    // Act
    const results = await Promise.all([
      send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [root] }, caller),
      send(deleteCalls, '/calls/delete', { project_id: caller.project, call_ids: [child] }, caller),
    ])

    // Assess
    expect(results.map((r) => r.status)).toEqual([200, 200])
    expect(results.reduce((n, r) => n + r.body.num_deleted, 0)).toBe(2)
    expect(await count(caller)).toBe(0)
  })
})

describe('call parts too large for DynamoDB are refused before anything is written', () => {
  it('answers 413 for a start with a 420 KB display_name among 30 good ones, storing and counting nothing', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const good = Array.from({ length: 30 }, () => ({ mode: 'start', req: { start: startPart(caller.project) } }))
    const bad = { mode: 'start', req: { start: startPart(caller.project, { display_name: 'y'.repeat(420_000) }) } }

    // Act
    const res = await send(upsertBatch, '/call/upsert_batch', { batch: [...good, bad] }, caller)

    // Assess
    expect(res).toEqual({ status: 413, body: { reason: 'Request too large' } })
    expect(await count(caller)).toBe(0)
    expect(await stored(caller)).toEqual([])
  })

  it('answers 413 for an end whose output refs alone pass 400 KB, storing and counting nothing', async () => {
    // Prepare: the output itself is chunked, but the refs found in it are kept on the end item for `output_refs`.
    const caller = await newProjectCaller()
    const id = randomUUID()
    const refs = Array.from(
      { length: 6_000 },
      (_, i) => `weave:///${caller.project}/object/item-${i}:${'d'.repeat(43)}`,
    )
    const end = endPart(caller.project, id, { output: { refs } })

    // Act
    const res = await send(endCall, '/call/end', { end }, caller)
    const batch = await send(
      upsertBatch,
      '/call/upsert_batch',
      {
        batch: [
          { mode: 'start', req: { start: startPart(caller.project, { id }) } },
          { mode: 'end', req: { end } },
        ],
      },
      caller,
    )

    // Assess
    expect(res.status).toBe(413)
    expect(batch.status).toBe(413)
    expect(await count(caller)).toBe(0)
    expect(await stored(caller)).toEqual([])
  })

  it('stores an exception longer than an item holds whole, beside an inline output, and reads it back', async () => {
    // Prepare: Weave stores an exception of any length; 450,000 characters (900 KB in UTF-8) with a 60 KB output.
    const caller = await newProjectCaller()
    const id = randomUUID()
    const exception = `Error: ${'é'.repeat(450_000)}`
    const end = endPart(caller.project, id, { exception, output: { text: 'o'.repeat(60_000) } })
    const start = startPart(caller.project, { id })

    // Act
    const batch = await send(
      upsertBatch,
      '/call/upsert_batch',
      {
        batch: [
          { mode: 'start', req: { start } },
          { mode: 'end', req: { end } },
        ],
      },
      caller,
    )
    const read = await send(readCall, '/call/read', { project_id: caller.project, id }, caller)
    const errors = await streamQuery.request(
      '/calls/stream_query',
      jsonInit({ project_id: caller.project, filter: { call_ids: [id] }, columns: ['id', 'exception'] }, caller.basic),
    )

    // Assess
    expect(batch.status).toBe(200)
    expect(read.status).toBe(200)
    expect(read.body.call.exception).toBe(exception)
    expect(read.body.call.output).toEqual({ text: 'o'.repeat(60_000) })
    expect(read.body.call.summary.weave.status).toBe('error')
    expect(JSON.parse((await errors.text()).trim()).exception).toBe(exception)
    expect(await count(caller)).toBe(1)
  })

  for (const field of ['op_name', 'trace_id', 'parent_id', 'thread_id', 'id'] as const) {
    it(`answers 400 for a ${field} longer than its DynamoDB key allows, in UTF-8 bytes, storing nothing`, async () => {
      // Prepare: 1,100 three-byte characters are 3,300 bytes (dynalite, counting characters, would take them).
      const caller = await newProjectCaller()
      const good = Array.from({ length: 30 }, () => ({ mode: 'start', req: { start: startPart(caller.project) } }))
      const bad = { mode: 'start', req: { start: startPart(caller.project, { [field]: '€'.repeat(1_100) }) } }

      // Act
      const res = await send(upsertBatch, '/call/upsert_batch', { batch: [...good, bad] }, caller)

      // Assess
      expect(res.status).toBe(400)
      expect(res.body.reason).toContain(field)
      expect(await count(caller)).toBe(0)
      expect(await stored(caller)).toEqual([])
    })
  }

  it('call/update answers 413 for a display_name that would take the start past 400 KB, keeping the stored one', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = randomUUID()
    const start = startPart(caller.project, { id, display_name: 'kept', inputs: { i: 'i'.repeat(60_000) } })
    await send(startCall, '/call/start', { start }, caller)
    const update = (name: string) =>
      send(updateCall, '/call/update', { project_id: caller.project, call_id: id, display_name: name }, caller)

    // Act: one larger than any item; one that fits alone but not beside the inputs; one of 3-byte characters; one of
    // 3-byte characters that fits alone but not beside the inputs (dynalite, counting 118,000 characters, let it through).
    const results = [
      await update('x'.repeat(420_000)),
      await update('x'.repeat(350_000)),
      await update('€'.repeat(140_000)),
      await update('€'.repeat(118_000)),
    ]
    const read = await send(readCall, '/call/read', { project_id: caller.project, id }, caller)

    // Assess
    expect(results).toEqual(Array(4).fill({ status: 413, body: { reason: 'Request too large' } }))
    expect(read.body.call.display_name).toBe('kept')
  })

  it('stores a start whose inline fields come close to the limit', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = randomUUID()
    const start = startPart(caller.project, {
      id,
      display_name: 'd'.repeat(250_000),
      attributes: { a: 'a'.repeat(60_000) },
      inputs: { i: 'i'.repeat(60_000) },
    })

    // Act
    const res = await send(startCall, '/call/start', { start }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(await count(caller)).toBe(1)
    expect(await stored(caller)).toEqual([id])
  })
})
