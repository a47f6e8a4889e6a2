import '../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as addItemsApp } from '#functions/tracing/add-annotation-queue-items/handler'
import { app as createQueueApp } from '#functions/tracing/create-annotation-queue/handler'
import { app as createTableApp } from '#functions/tracing/create-table/handler'
import { app as itemsApp } from '#functions/tracing/query-annotation-queue-items/handler'
import { app as queryQueuesApp } from '#functions/tracing/query-annotation-queues/handler'
import { app as queryTableApp } from '#functions/tracing/query-table/handler'
import { app as streamQueryApp } from '#functions/tracing/stream-query-calls/handler'
import { app as createModelApp } from '#functions/training/create-preview-model/handler'
import { app as listModelsApp } from '#functions/training/list-preview-models/handler'
import { tableDigest, valDigest } from '#shared/tracing/digest'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { startPart, writeCalls } from '../support/calls.js'
import { type DynamoFaultProxy, useDynamoFaultProxy } from '../support/dynamo-fault-proxy.js'
import { newCalls, newQueue } from '../support/queues.js'
import { newProjectCaller, type ProjectCaller, send } from '../support/tracing.js'

// Retries after partial failures and lost answers on annotation queues, tables and preview models: a retried write
// never duplicates, nothing half-written is visible, and a retry or race is never a 500.

let proxy: DynamoFaultProxy
useDynamoFaultProxy((started) => {
  proxy = started
})

async function liveQueues(c: ProjectCaller): Promise<{ id: string }[]> {
  const res = await queryQueuesApp.request('/annotation_queues/query', jsonInit({ project_id: c.project }, c.basic))
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { id: string })
}

async function streamed(c: ProjectCaller, body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const res = await streamQueryApp.request('/calls/stream_query', jsonInit({ project_id: c.project, ...body }, c.basic))
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

describe('POST /annotation_queues/{id}/items after a partial failure', () => {
  it('adds the call on retry when the first attempt claimed it but failed to write the item', async () => {
    // Prepare
    const c = await newProjectCaller()
    const [callId] = await newCalls(c, 1)
    const queueId = await newQueue(c)
    const path = `/annotation_queues/${queueId}/items`
    const body = { project_id: c.project, call_ids: [callId], display_fields: ['inputs'] }
    // The claim (first PutItem) is stored; the item (second) never is.
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], skip: 1 })
    const failed = await send(addItemsApp, path, body, c)
    proxy.clear()

    // Act
    const retried = await send(addItemsApp, path, body, c)
    const again = await send(addItemsApp, path, body, c)

    // Assess
    const items = await send(itemsApp, `${path}/query`, { project_id: c.project }, c)
    expect(failed.status).toBe(503)
    expect(retried).toEqual({ status: 200, body: { added_count: 1, duplicates: 0 } })
    expect(again).toEqual({ status: 200, body: { added_count: 0, duplicates: 1 } })
    expect(items.body.items.map((i: { call_id: string }) => i.call_id)).toEqual([callId])
  })
})

describe('POST /annotation_queues under retries', () => {
  it('creates one queue for two attempts carrying one X-Weave-Retry-Id', async () => {
    // Prepare
    const c = await newProjectCaller()
    const headers = { ...c.basic, 'x-weave-retry-id': randomUUID() }
    const body = { project_id: c.project, name: 'once', scorer_refs: [] }

    // Act
    const first = await createQueueApp.request('/annotation_queues', jsonInit(body, headers))
    const second = await createQueueApp.request('/annotation_queues', jsonInit(body, headers))

    // Assess
    const ids = [((await first.json()) as { id: string }).id, ((await second.json()) as { id: string }).id]
    expect([first.status, second.status]).toEqual([200, 200])
    expect(ids[1]).toBe(ids[0])
    expect((await liveQueues(c)).map((q) => q.id)).toEqual([ids[0]])
  })

  it('completes the queue on a retry after a 503 that came after the retry id was recorded', async () => {
    // Prepare
    const c = await newProjectCaller()
    await liveQueues(c)
    const headers = { ...c.basic, 'x-weave-retry-id': randomUUID() }
    const body = { project_id: c.project, name: 'late', scorer_refs: [] }
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], skip: 1 })
    const failed = await createQueueApp.request('/annotation_queues', jsonInit(body, headers))
    proxy.clear()

    // Act
    const retried = await createQueueApp.request('/annotation_queues', jsonInit(body, headers))

    // Assess
    const { id } = (await retried.json()) as { id: string }
    expect([failed.status, retried.status]).toEqual([503, 200])
    expect((await liveQueues(c)).map((q) => q.id)).toEqual([id])
  })

  it("answers 409, not another user's queue, to a second user reusing a retry id in the project", async () => {
    // Prepare
    const c = await newProjectCaller()
    const colleague = await newCaller(c.entity)
    const retryId = randomUUID()
    const body = { project_id: c.project, name: 'mine', scorer_refs: [] }
    const first = await createQueueApp.request(
      '/annotation_queues',
      jsonInit(body, { ...c.basic, 'x-weave-retry-id': retryId }),
    )

    // Act
    const other = await createQueueApp.request(
      '/annotation_queues',
      jsonInit(body, { ...colleague.basic, 'x-weave-retry-id': retryId }),
    )

    // Assess
    expect(first.status).toBe(200)
    expect(other.status).toBe(409)
    expect((await liveQueues(c)).length).toBe(1)
  })

  it.each([
    ['without', false],
    ['with', true],
  ])('answers 200 when the answer to the queue put is lost (%s a retry id)', async (_, withRetryId) => {
    // Prepare
    const c = await newProjectCaller()
    await liveQueues(c)
    const headers = withRetryId ? { ...c.basic, 'x-weave-retry-id': randomUUID() } : c.basic
    const body = { project_id: c.project, name: 'lost', scorer_refs: [] }
    // With a retry id the first PutItem records it; the queue put is the last PutItem either way.
    proxy.inject({ fault: 'drop-after-apply', operations: ['PutItem'], skip: withRetryId ? 1 : 0, times: 1 })

    // Act
    const res = await createQueueApp.request('/annotation_queues', jsonInit(body, headers))

    // Assess
    expect(res.status).toBe(200)
    const { id } = (await res.json()) as { id: string }
    expect((await liveQueues(c)).map((q) => q.id)).toEqual([id])
  })
})

describe('POST /table/create after a partial failure', () => {
  const rows = Array.from({ length: 30 }, (_, i) => ({ i }))
  const rowDigests = rows.map((r) => valDigest(r))
  const digest = tableDigest(rowDigests)

  async function tableRows(c: ProjectCaller): Promise<unknown[]> {
    const res = await send(queryTableApp, '/table/query', { project_id: c.project, digest }, c)
    expect(res.status).toBe(200)
    return res.body.rows
  }

  async function expandedRow(c: ProjectCaller, callId: string): Promise<unknown> {
    const [call] = await streamed(c, { filter: { call_ids: [callId] }, expand_columns: ['inputs.row'] })
    return (call?.inputs as Record<string, unknown> | undefined)?.row
  }

  it.each([
    ['the second row batch', 'BatchWriteItem'],
    ['the header', 'PutItem'],
  ])('shows no rows until a retry stores the whole table (%s failed)', async (_, operation) => {
    // Prepare
    const c = await newProjectCaller()
    const rowRef = `weave:///${c.project}/table/${digest}/id/${rowDigests[0]}`
    const callId = randomUUID()
    await writeCalls(c, [{ start: startPart(c.project, { id: callId, inputs: { row: rowRef } }) }])
    proxy.inject({ fault: 'unavailable', operations: [operation], skip: operation === 'BatchWriteItem' ? 1 : 0 })
    const failed = await send(createTableApp, '/table/create', { table: { project_id: c.project, rows } }, c)
    proxy.clear()

    // Act
    const partialRows = await tableRows(c)
    const partialRef = await expandedRow(c, callId)
    const retried = await send(createTableApp, '/table/create', { table: { project_id: c.project, rows } }, c)

    // Assess
    expect(failed.status).toBe(503)
    expect(partialRows).toEqual([])
    expect(partialRef).toBe(rowRef)
    expect(retried).toEqual({ status: 200, body: { digest, row_digests: rowDigests } })
    expect((await tableRows(c)).length).toBe(30)
    expect(await expandedRow(c, callId)).toEqual({ i: 0, _ref: rowRef })
  })
})

describe('POST /v1/preview/models under retries', () => {
  const spec = (caller: TestCaller, base = 'Qwen/Qwen2.5-7B-Instruct') => ({
    entity: caller.entity,
    project: 'rl',
    name: 'agent',
    base_model: base,
  })

  async function create(caller: TestCaller, body: Record<string, unknown>) {
    const res = await createModelApp.request('/v1/preview/models', jsonInit(body, caller.bearer))
    return { status: res.status, json: (await res.json()) as Record<string, unknown> }
  }

  async function listed(caller: TestCaller): Promise<{ id: string }[]> {
    const res = await listModelsApp.request(`/v1/preview/models?entity=${caller.entity}`, { headers: caller.bearer })
    expect(res.status).toBe(200)
    return ((await res.json()) as { data: { id: string }[] }).data
  }

  it('answers 200 when the answer to the name claim is lost', async () => {
    // Prepare
    const caller = await newCaller()
    await listed(caller)
    proxy.inject({ fault: 'drop-after-apply', operations: ['PutItem'], times: 1 })

    // Act
    const res = await create(caller, spec(caller))

    // Assess
    expect(res.status).toBe(200)
    expect((await listed(caller)).map((m) => m.id)).toEqual([res.json.id])
  })

  it("completes the model on the caller's retry after a 503 that came after the name claim", async () => {
    // Prepare
    const caller = await newCaller()
    await listed(caller)
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], skip: 1 })
    const failed = await create(caller, spec(caller))
    proxy.clear()
    const before = await listed(caller)

    // Act
    const retried = await create(caller, spec(caller))

    // Assess
    expect(failed.status).toBe(503)
    expect(before).toEqual([])
    expect(retried.status).toBe(200)
    expect((await listed(caller)).map((m) => m.id)).toEqual([retried.json.id])
  })

  it('answers 409 to a repeat once the model is visible, and to a different request for the name', async () => {
    // Prepare
    const caller = await newCaller()
    await listed(caller)
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], skip: 1 })
    await create(caller, spec(caller))
    proxy.clear()

    // Act
    const retried = await create(caller, spec(caller))
    const repeat = await create(caller, spec(caller))
    const other = await create(caller, spec(caller, 'Qwen/Qwen2.5-14B-Instruct'))

    // Assess
    expect(retried.status).toBe(200)
    expect(repeat).toEqual({ status: 409, json: { detail: `Model '${caller.entity}/rl/agent' already exists` } })
    expect(other).toEqual({ status: 409, json: { detail: `Model '${caller.entity}/rl/agent' already exists` } })
    expect((await listed(caller)).map((m) => m.id)).toEqual([retried.json.id])
  })

  it('still answers 409 to another user of the entity creating the same name with the same body', async () => {
    // Prepare
    const caller = await newCaller()
    await listed(caller)
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], skip: 1 })
    await create(caller, spec(caller))
    proxy.clear()
    const colleague = await newCaller(caller.entity)

    // Act
    const res = await create(colleague, spec(caller))

    // Assess
    expect(res.status).toBe(409)
  })
})
