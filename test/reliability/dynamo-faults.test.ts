import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { app as chatApp } from '#functions/inference/create-chat-completion/handler'
import { app as modelsApp } from '#functions/inference/list-models/handler'
import { app as createFeedbackBatch } from '#functions/tracing/create-feedback-batch/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app as queryFeedback } from '#functions/tracing/query-feedback/handler'
import { app as readCall } from '#functions/tracing/read-call/handler'
import { app as readObj } from '#functions/tracing/read-obj/handler'
import { app as startCall } from '#functions/tracing/start-call/handler'
import { app as streamQuery } from '#functions/tracing/stream-query-calls/handler'
import { app as upsertBatch } from '#functions/tracing/upsert-call-batch/handler'
import { app as metricsApp } from '#functions/training/get-model-metrics/handler'
import { app as logApp } from '#functions/training/log-trajectories/handler'
import { config } from '#shared/config'
import { listLogRecords } from '#shared/db/training-log-repository'
import { UNAVAILABLE_MESSAGE } from '#shared/errors/error-response'
import { clearCatalogCache } from '#shared/inference/catalog'
import { jsonInit, newCaller } from '../support/auth.js'
import { endPart, startPart } from '../support/calls.js'
import { type DynamoFaultProxy, useDynamoFaultProxy } from '../support/dynamo-fault-proxy.js'
import { addUpstreamModel } from '../support/models.js'
import { publish } from '../support/objects.js'
import { newProjectCaller, type ProjectCaller, send } from '../support/tracing.js'
import { newModel, trajectory } from '../support/training.js'
import { startVllmUpstream, type VllmUpstream } from '../support/vllm-upstream.js'

let proxy: DynamoFaultProxy
let upstream: VllmUpstream
useDynamoFaultProxy((started) => {
  proxy = started
})

beforeAll(async () => {
  upstream = await startVllmUpstream()
})

afterAll(async () => {
  await upstream.close()
})

const calls = (caller: ProjectCaller, ids: string[]) =>
  ids.flatMap((id, i) => [
    { mode: 'start', req: { start: startPart(caller.project, { id, inputs: { i } }) } },
    { mode: 'end', req: { end: endPart(caller.project, id, { output: i }) } },
  ])

async function count(caller: ProjectCaller): Promise<number> {
  const res = await send(statsApp, '/calls/query_stats', { project_id: caller.project }, caller)
  expect(res.status).toBe(200)
  return res.body.count
}

async function streamed(caller: ProjectCaller): Promise<Record<string, unknown>[]> {
  const res = await streamQuery.request('/calls/stream_query', jsonInit({ project_id: caller.project }, caller.basic))
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
}

function logPath(modelId: string): string {
  return `/v1/preview/models/${modelId}/log`
}

describe('transient DynamoDB faults are retried', () => {
  it('starts a call after two throttled writes, and the proxy saw the retries', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = randomUUID()
    await send(readCall, '/call/read', { project_id: caller.project, id }, caller) // warms the key cache
    proxy.inject({ fault: 'throttling', operations: ['DynamoDB_20120810.BatchWriteItem'], times: 2 })
    proxy.resetCounts()

    // Act
    const res = await send(startCall, '/call/start', { start: startPart(caller.project, { id }) }, caller)
    const read = await send(readCall, '/call/read', { project_id: caller.project, id }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(proxy.seen('BatchWriteItem')).toBe(3)
    expect(read.body.call).toMatchObject({ id, project_id: caller.project })
    expect(await count(caller)).toBe(1)
  })

  it('reads an object through a dropped socket and a 500', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const digest = await publish(caller, 'cfg', { depth: 3 })
    proxy.inject({ fault: 'drop', operations: ['GetItem'], times: 1 })
    proxy.inject({ fault: 'internal-error', operations: ['GetItem'], times: 1 })
    proxy.resetCounts()

    // Act
    const res = await send(readObj, '/obj/read', { project_id: caller.project, object_id: 'cfg', digest }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.obj.val).toEqual({ depth: 3 })
    expect(proxy.seen('GetItem')).toBeGreaterThanOrEqual(3)
  })

  it('logs trajectories after provisioned-throughput errors and a 503', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    proxy.inject({ fault: 'provisioned-throughput', operations: ['UpdateItem'], times: 2 })
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], times: 1 })
    proxy.resetCounts()
    const body = { split: 'train', trajectory_groups: [{ trajectories: [trajectory(1), trajectory(0)] }] }

    // Act
    const res = await logApp.request(logPath(model.id), jsonInit(body, caller.bearer))

    // Assess
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ step: 0, trajectory_count: 2 })
    expect(proxy.seen('UpdateItem')).toBeGreaterThanOrEqual(3)
  })

  it('lists models after a throttled and an unavailable query', async () => {
    // Prepare
    const caller = await newCaller()
    await addUpstreamModel(upstream.baseUrl, [caller.entity])
    await modelsApp.request('/v1/models', { headers: caller.bearer })
    clearCatalogCache()
    proxy.inject({ fault: 'throttling', operations: ['Query'], times: 1 })
    proxy.inject({ fault: 'unavailable', operations: ['Query'], times: 1 })
    proxy.resetCounts()

    // Act
    const res = await modelsApp.request('/v1/models', { headers: caller.bearer })

    // Assess
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(1)
    expect(proxy.seen('Query')).toBeGreaterThanOrEqual(3)
  })

  it('writes every call when BatchWriteItem hands items back unprocessed', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const ids = Array.from({ length: 8 }, () => randomUUID())
    proxy.inject({ fault: 'unprocessed', operations: ['BatchWriteItem'], times: 3 })

    // Act
    const res = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids) }, caller)

    // Assess
    expect(res.status).toBe(200)
    const stored = await streamed(caller)
    expect(stored.map((c) => c.id).sort()).toEqual([...ids].sort())
    expect(stored.every((c) => c.ended_at !== null)).toBe(true)
    expect(await count(caller)).toBe(8)
  })

  it('makes a bounded number of attempts with growing, jittered waits', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await count(caller)
    config.dynamo.retryBaseMs = 20
    config.dynamo.retryMaxDelayMs = 1_000
    proxy.inject({ fault: 'unavailable', operations: ['Query'] })
    proxy.resetCounts()

    // Act
    const started = performance.now()
    const res = await send(statsApp, '/calls/query_stats', { project_id: caller.project }, caller)
    const elapsed = performance.now() - started

    // Assess: 3 waits of at most 20, 40 and 80 ms.
    expect(res.status).toBe(503)
    expect(proxy.seen('Query')).toBe(config.dynamo.maxAttempts)
    expect(elapsed).toBeLessThan(1_000)
  })
})

describe('persistent DynamoDB faults answer 503 with Retry-After in the family shape', () => {
  it('tracing: throttled writes, unavailable queries and dropped reads', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const digest = await publish(caller, 'cfg', 1)
    proxy.inject({ fault: 'throttling', operations: ['BatchWriteItem'] })
    proxy.inject({ fault: 'unavailable', operations: ['Query'] })
    proxy.inject({ fault: 'drop', operations: ['GetItem'] })
    proxy.resetCounts()

    // Act
    const start = await startCall.request('/call/start', jsonInit({ start: startPart(caller.project) }, caller.basic))
    const stats = await statsApp.request('/calls/query_stats', jsonInit({ project_id: caller.project }, caller.basic))
    const read = await readObj.request(
      '/obj/read',
      jsonInit({ project_id: caller.project, object_id: 'cfg', digest }, caller.basic),
    )

    // Assess
    for (const res of [start, stats, read]) {
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(await res.json()).toEqual({ reason: UNAVAILABLE_MESSAGE })
    }
    expect(proxy.seen('BatchWriteItem')).toBe(config.dynamo.maxAttempts)
    expect(proxy.seen('Query')).toBe(config.dynamo.maxAttempts)
  })

  it('tracing: items left unprocessed round after round', async () => {
    // Prepare
    const caller = await newProjectCaller()
    proxy.inject({ fault: 'unprocessed', operations: ['BatchWriteItem'] })

    // Act
    const res = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, [randomUUID()]) }, caller)

    // Assess
    expect(res.status).toBe(503)
    expect(res.body).toEqual({ reason: UNAVAILABLE_MESSAGE })
  })

  it('training: a throttled log and a 500 on the metrics read', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    const body = { split: 'train', trajectory_groups: [{ trajectories: [trajectory(1)] }] }
    proxy.inject({ fault: 'throttling', operations: ['BatchWriteItem', 'PutItem', 'UpdateItem'] })
    proxy.inject({ fault: 'internal-error', operations: ['Query'] })

    // Act
    const log = await logApp.request(logPath(model.id), jsonInit(body, caller.bearer))
    const metrics = await metricsApp.request(`/v1/preview/models/${model.id}/metrics`, { headers: caller.bearer })

    // Assess
    for (const res of [log, metrics]) {
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(await res.json()).toEqual({ detail: UNAVAILABLE_MESSAGE })
    }
  })

  it('inference: models and chat completions when the catalog cannot be read', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await addUpstreamModel(upstream.baseUrl, [caller.entity])
    await modelsApp.request('/v1/models', { headers: caller.bearer })
    clearCatalogCache()
    proxy.inject({ fault: 'unavailable', operations: ['Query', 'GetItem'] })

    // Act
    const models = await modelsApp.request('/v1/models', { headers: caller.bearer })
    const chat = await chatApp.request(
      '/v1/chat/completions',
      jsonInit({ model: model.id, messages: [{ role: 'user', content: 'hi' }] }, caller.bearer),
    )

    // Assess
    for (const res of [models, chat]) {
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(await res.json()).toEqual({
        error: { message: UNAVAILABLE_MESSAGE, type: 'ServiceUnavailableError', param: null, code: 503 },
      })
    }
  })

  it('answers 503, not 401, when the key itself cannot be looked up', async () => {
    // Prepare: a fresh key is in no cache.
    const caller = await newProjectCaller()
    proxy.inject({ fault: 'drop' })

    // Act
    const tracing = await statsApp.request('/calls/query_stats', jsonInit({ project_id: caller.project }, caller.basic))
    const inference = await modelsApp.request('/v1/models', { headers: caller.bearer })

    // Assess
    expect(tracing.status).toBe(503)
    expect(inference.status).toBe(503)
    expect(tracing.headers.get('retry-after')).toBe('1')
  })

  it('answers 503 when DynamoDB does not answer within the request timeout', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await count(caller)
    config.dynamo.requestTimeoutMs = 100
    proxy.inject({ fault: { delayMs: 400 }, operations: ['Query'] })

    // Act
    const res = await send(statsApp, '/calls/query_stats', { project_id: caller.project }, caller)

    // Assess
    expect(res.status).toBe(503)
    expect(res.body).toEqual({ reason: UNAVAILABLE_MESSAGE })
  })
})

describe('a write that fails part-way, retried as is, leaves one consistent copy', () => {
  it('upsert_batch: the second BatchWriteItem fails, the same batch is sent again', async () => {
    // Prepare: 20 calls are 40 items, two BatchWriteItem requests.
    const caller = await newProjectCaller()
    const ids = Array.from({ length: 20 }, () => randomUUID())
    const batch = calls(caller, ids)
    proxy.inject({ fault: 'unavailable', operations: ['BatchWriteItem'], skip: 1 })

    // Act
    const failed = await send(upsertBatch, '/call/upsert_batch', { batch }, caller)
    proxy.clear()
    const retried = await send(upsertBatch, '/call/upsert_batch', { batch }, caller)

    // Assess
    expect(failed.status).toBe(503)
    expect(retried.status).toBe(200)
    const stored = await streamed(caller)
    expect(stored).toHaveLength(20)
    expect(new Set(stored.map((c) => c.id)).size).toBe(20)
    for (const [i, id] of ids.entries()) {
      expect(stored.find((c) => c.id === id)).toMatchObject({ inputs: { i }, output: i })
    }
    expect(await count(caller)).toBe(20)
  })

  it('upsert_batch: every counter write is applied but its answer lost, and the client retries it', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const ids = Array.from({ length: 5 }, () => randomUUID())
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem', 'BatchWriteItem'], times: 3 })

    // Act
    const res = await send(upsertBatch, '/call/upsert_batch', { batch: calls(caller, ids) }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(await count(caller)).toBe(5)
    expect((await streamed(caller)).map((c) => c.id).sort()).toEqual([...ids].sort())
  })

  it('feedback batch: the third row fails, the same request is retried with its retry id', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const batch = [1, 2, 3, 4].map((n) => ({
      project_id: caller.project,
      weave_ref: `weave:///${caller.project}/call/${randomUUID()}`,
      feedback_type: 'note',
      payload: { note: `n${n}` },
    }))
    const headers = { ...caller.basic, 'x-weave-retry-id': `retry-${randomUUID()}` }
    proxy.inject({ fault: 'throttling', operations: ['PutItem'], skip: 2 })

    // Act
    const failed = await createFeedbackBatch.request('/feedback/batch/create', jsonInit({ batch }, headers))
    proxy.clear()
    const retried = await createFeedbackBatch.request('/feedback/batch/create', jsonInit({ batch }, headers))
    const stored = await send(queryFeedback, '/feedback/query', { project_id: caller.project }, caller)

    // Assess
    expect(failed.status).toBe(503)
    expect(failed.headers.get('retry-after')).toBe('1')
    expect(retried.status).toBe(200)
    const notes = stored.body.result.map((f: { payload: { note: string } }) => f.payload.note).sort()
    expect(notes).toEqual(['n1', 'n2', 'n3', 'n4'])
  })

  it('training log: fails after its groups were stored, the same request is retried with its Idempotency-Key', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    const body = { split: 'train', trajectory_groups: [{ trajectories: [trajectory(1), trajectory(0.5)] }] }
    const headers = { ...caller.bearer, 'idempotency-key': `k-${randomUUID()}` }
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], skip: 1 })

    // Act
    const failed = await logApp.request(logPath(model.id), jsonInit(body, headers))
    proxy.clear()
    const retried = await logApp.request(logPath(model.id), jsonInit(body, headers))
    const again = await logApp.request(logPath(model.id), jsonInit(body, headers))
    const next = await logApp.request(logPath(model.id), jsonInit(body, caller.bearer))
    const metrics = await metricsApp.request(`/v1/preview/models/${model.id}/metrics`, { headers: caller.bearer })
    const records = await listLogRecords(model.id)
    const tracing: ProjectCaller = { ...caller, project: `${caller.entity}/${model.project}` }

    // Assess
    expect(failed.status).toBe(503)
    expect(retried.status).toBe(200)
    const first = (await retried.json()) as { log_id: string; step: number }
    expect(first.step).toBe(0)
    expect(await again.json()).toEqual(first)
    const second = (await next.json()) as { log_id: string }
    expect(metrics.status).toBe(200)
    expect(((await metrics.json()) as { rows: unknown[] }).rows).toHaveLength(2)
    expect(records.map((r) => r.logId).sort()).toEqual([first.log_id, second.log_id].sort())
    expect(await count(tracing)).toBe(2)
  })
})
