import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as createFeedbackBatch } from '#functions/tracing/create-feedback-batch/handler'
import { app as createObj } from '#functions/tracing/create-obj/handler'
import { app as deleteObj } from '#functions/tracing/delete-obj/handler'
import { app as statsApp } from '#functions/tracing/get-annotation-queues-stats/handler'
import { app as itemsApp } from '#functions/tracing/query-annotation-queue-items/handler'
import { app as queryFeedback } from '#functions/tracing/query-feedback/handler'
import { app as queryObjs } from '#functions/tracing/query-objs/handler'
import { app as readObj } from '#functions/tracing/read-obj/handler'
import { app as streamQuery } from '#functions/tracing/stream-query-calls/handler'
import { app as progressApp } from '#functions/tracing/update-annotation-queue-item-progress/handler'
import { app as upsertBatch } from '#functions/tracing/upsert-call-batch/handler'
import { app as logApp } from '#functions/training/log-trajectories/handler'
import { listLogRecords } from '#shared/db/training-log-repository'
import { jsonInit, newCaller } from '../support/auth.js'
import { endPart, startPart } from '../support/calls.js'
import { addCalls, newCalls, newQueue } from '../support/queues.js'
import { newProjectCaller, type ProjectCaller, send } from '../support/tracing.js'
import { newModel, trajectory } from '../support/training.js'

const PARALLEL = 6

/** The calls of a project as `calls/stream_query` answers them (JSON lines). */
async function streamCalls(caller: ProjectCaller): Promise<Record<string, unknown>[]> {
  const res = await streamQuery.request('/calls/stream_query', jsonInit({ project_id: caller.project }, caller.basic))
  const text = await res.text()
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
}

describe('concurrent retries and races', () => {
  it('stores each call of a batch once when the same upsert_batch arrives many times at once, ends first or not', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const ids = Array.from({ length: 5 }, () => randomUUID())
    const batch = ids.flatMap((id, i) => [
      { mode: 'start', req: { start: startPart(caller.project, { id, inputs: { i } }) } },
      { mode: 'end', req: { end: endPart(caller.project, id, { output: i * 10 }) } },
    ])
    // Half the retries carry the parts in reverse order: an end may land before its start.
    const reversed = [...batch].reverse()

    // Act
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, (_, n) =>
        upsertBatch.request('/call/upsert_batch', jsonInit({ batch: n % 2 ? reversed : batch }, caller.basic)),
      ),
    )
    const calls = await streamCalls(caller)

    // Assess
    expect(results.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200))
    expect(calls.map((c) => c.id).sort()).toEqual([...ids].sort())
    for (const [i, id] of ids.entries()) {
      const c = calls.find((x) => x.id === id) as Record<string, unknown>
      expect(c.output).toBe(i * 10)
      expect(c.inputs).toEqual({ i })
      expect(c.ended_at).not.toBeNull()
    }
  })

  it('creates a feedback batch once under concurrent retries, by client ids and by X-Weave-Retry-Id', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const item = (extra: Record<string, unknown>) => ({
      project_id: caller.project,
      weave_ref: `weave:///${caller.project}/call/${randomUUID()}`,
      feedback_type: 'note',
      payload: { note: 'n' },
      ...extra,
    })
    const withIds = { batch: [1, 2, 3].map((n) => item({ id: `client-${n}` })) }
    const withoutIds = { batch: [1, 2, 3].map(() => item({})) }
    const retry = { ...caller.basic, 'x-weave-retry-id': `retry-${randomUUID()}` }

    // Act
    const first = await Promise.all(
      Array.from({ length: PARALLEL }, () => send(createFeedbackBatch, '/feedback/batch/create', withIds, caller)),
    )
    const second = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        createFeedbackBatch.request('/feedback/batch/create', jsonInit(withoutIds, retry)),
      ),
    )
    const secondBodies = await Promise.all(second.map((r) => r.json()))
    const stored = await send(queryFeedback, '/feedback/query', { project_id: caller.project }, caller)

    // Assess
    expect(first.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200))
    expect(second.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200))
    expect(new Set(secondBodies.map((b) => JSON.stringify(b))).size).toBe(1)
    const ids = stored.body.result.map((f: { id: string }) => f.id)
    expect(ids).toHaveLength(6)
    expect(new Set(ids).size).toBe(6)
    expect(ids).toEqual(expect.arrayContaining(['client-1', 'client-2', 'client-3']))
  })

  it('keeps one progress record per annotator when two annotators race on one queue item', async () => {
    // Prepare
    const a = await newProjectCaller()
    const b: ProjectCaller = { ...(await newCaller(a.entity)), project: a.project }
    const q = await newQueue(a)
    await addCalls(a, q, await newCalls(a, 1))
    const list = async () =>
      (await send(itemsApp, `/annotation_queues/${q}/items/query`, { project_id: a.project }, a)).body.items
    const [item] = await list()
    const progress = (c: ProjectCaller, state: string) =>
      send(
        progressApp,
        `/annotation_queues/${q}/items/${item.id}/progress`,
        { project_id: a.project, annotation_state: state },
        c,
      )

    // Act
    const results = await Promise.all([
      ...Array.from({ length: 3 }, () => progress(a, 'completed')),
      ...Array.from({ length: 3 }, () => progress(b, 'completed')),
    ])
    const items = await list()
    const stats = await send(statsApp, '/annotation_queues/stats', { project_id: a.project, queue_ids: [q] }, a)

    // Assess: completing is idempotent per annotator, and the item counts as completed once.
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200))
    expect(items).toHaveLength(1)
    expect(items[0].annotation_state).toBe('completed')
    expect(stats.body).toEqual({ stats: [{ queue_id: q, total_items: 1, completed_items: 1 }] })
  })

  it('numbers concurrent new versions of one object without gaps or duplicates', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const values = Array.from({ length: PARALLEL }, (_, i) => ({ v: i }))

    // Act
    const results = await Promise.all(
      values.map((val) =>
        send(createObj, '/obj/create', { obj: { project_id: caller.project, object_id: 'raced', val } }, caller),
      ),
    )
    const listed = await send(queryObjs, '/objs/query', { project_id: caller.project }, caller)

    // Assess
    expect(results.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200))
    const versions = listed.body.objs as { digest: string; version_index: number; is_latest: number }[]
    expect(versions.map((o) => o.version_index).sort((x, y) => x - y)).toEqual(values.map((_, i) => i))
    expect(new Set(versions.map((o) => o.digest))).toEqual(new Set(results.map((r) => r.body.digest)))
    expect(versions.filter((o) => o.is_latest === 1)).toHaveLength(1)
  })

  it('numbers each value once when several values are each sent several times at once', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const sends = Array.from({ length: PARALLEL * 2 }, (_, i) => ({ v: i % 3 }))

    // Act
    const results = await Promise.all(
      sends.map((val) =>
        send(createObj, '/obj/create', { obj: { project_id: caller.project, object_id: 'dup', val } }, caller),
      ),
    )
    const listed = await send(queryObjs, '/objs/query', { project_id: caller.project }, caller)

    // Assess
    expect(results.map((r) => r.status)).toEqual(Array(PARALLEL * 2).fill(200))
    const versions = listed.body.objs as { digest: string; version_index: number }[]
    expect(versions.map((o) => o.version_index).sort()).toEqual([0, 1, 2])
    expect(new Set(versions.map((o) => o.digest))).toEqual(new Set(results.map((r) => r.body.digest)))
  })

  it('answers 200 to every one of many concurrent re-publishes of a deleted value', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const body = { obj: { project_id: caller.project, object_id: 'again', val: { v: 1 } } }
    const first = await send(createObj, '/obj/create', body, caller)
    await send(deleteObj, '/obj/delete', { project_id: caller.project, object_id: 'again' }, caller)

    // Act
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () => send(createObj, '/obj/create', body, caller)),
    )
    const latest = await send(
      readObj,
      '/obj/read',
      { project_id: caller.project, object_id: 'again', digest: 'latest' },
      caller,
    )

    // Assess: the version is live again under its old index.
    expect(results.map((r) => `${r.status} ${r.body.digest}`)).toEqual(Array(PARALLEL).fill(`200 ${first.body.digest}`))
    expect(latest.status).toBe(200)
    expect(latest.body.obj).toMatchObject({ digest: first.body.digest, version_index: 0, deleted_at: null })
  })

  it('logs a training step once when the same Idempotency-Key arrives many times at once', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    const body = { split: 'train', trajectory_groups: [{ trajectories: [trajectory(1), trajectory(0)] }] }
    const headers = { ...caller.bearer, 'idempotency-key': `k-${randomUUID()}` }

    // Act
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        logApp.request(`/v1/preview/models/${model.id}/log`, jsonInit(body, headers)),
      ),
    )
    const statuses = results.map((r) => r.status)

    // Assess: every attempt is answered 200 (a replay) or 409 (still in flight), and one record is stored.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1)
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true)
    expect(await listLogRecords(model.id)).toHaveLength(1)
  })
})
