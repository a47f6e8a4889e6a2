import { describe, expect, it } from 'vitest'
import { app as createObj } from '#functions/tracing/create-obj/handler'
import { app as deleteObj } from '#functions/tracing/delete-obj/handler'
import { app as queryObjs } from '#functions/tracing/query-objs/handler'
import { app as readObj } from '#functions/tracing/read-obj/handler'
import { app as setAliases } from '#functions/tracing/set-obj-aliases/handler'
import { type DynamoFaultProxy, useDynamoFaultProxy } from '../support/dynamo-fault-proxy.js'
import { publish } from '../support/objects.js'
import { newProjectCaller, type ProjectCaller, type Res, send } from '../support/tracing.js'

// obj/create and obj/delete are several writes each; these inject DynamoDB failures and lost answers between them and
// check that a retry (the SDK's own, or the client's) converges on one readable, consistently numbered state.

let proxy: DynamoFaultProxy
useDynamoFaultProxy((started) => {
  proxy = started
})

/** A caller whose credentials are already cached, so injected faults hit only the object writes. */
async function warmCaller(): Promise<ProjectCaller> {
  const caller = await newProjectCaller()
  await send(queryObjs, '/objs/query', { project_id: caller.project }, caller)
  return caller
}

const create = (caller: ProjectCaller, objectId: string, val: unknown) =>
  send(createObj, '/obj/create', { obj: { project_id: caller.project, object_id: objectId, val } }, caller)

const read = (caller: ProjectCaller, objectId: string, digest: string) =>
  send(readObj, '/obj/read', { project_id: caller.project, object_id: objectId, digest }, caller)

const summary = (res: Res) => ({
  status: res.status,
  digest: res.body?.obj?.digest,
  index: res.body?.obj?.version_index,
})

async function indexes(caller: ProjectCaller): Promise<Record<string, number>> {
  const res = await send(queryObjs, '/objs/query', { project_id: caller.project }, caller)
  expect(res.status).toBe(200)
  return Object.fromEntries(
    res.body.objs.map((o: { digest: string; version_index: number }) => [o.digest, o.version_index]),
  )
}

describe('obj/create retried after a failure between its writes', () => {
  it('finishes the version when the first attempt failed before drawing an index', async () => {
    // Prepare: the claim is stored, every index write fails.
    const caller = await warmCaller()
    proxy.inject({ fault: 'unavailable', operations: ['UpdateItem'] })
    const failed = await create(caller, 'cfg', { depth: 7 })
    proxy.clear()

    // Act
    const retried = await create(caller, 'cfg', { depth: 7 })
    const byDigest = await read(caller, 'cfg', retried.body.digest)
    const latest = await read(caller, 'cfg', 'latest')
    const v0 = await read(caller, 'cfg', 'v0')

    // Assess
    expect(failed.status).toBe(503)
    expect(retried.status).toBe(200)
    const expected = { status: 200, digest: retried.body.digest, index: 0 }
    expect([summary(byDigest), summary(latest), summary(v0)]).toEqual([expected, expected, expected])
  })

  it('keeps the index drawn by the first attempt when only recording it failed', async () => {
    // Prepare: the counter advances, recording the index on the version fails.
    const caller = await warmCaller()
    proxy.inject({ fault: 'unavailable', operations: ['UpdateItem'], skip: 1 })
    const failed = await create(caller, 'cfg', { depth: 8 })
    proxy.clear()

    // Act
    const retried = await create(caller, 'cfg', { depth: 8 })
    const v0 = await read(caller, 'cfg', 'v0')
    const latest = await read(caller, 'cfg', 'latest')
    const next = await create(caller, 'cfg', { depth: 9 })

    // Assess: the retry finishes the version with the index the failed attempt drew; none is lost.
    expect(failed.status).toBe(503)
    expect(retried.status).toBe(200)
    const expected = { status: 200, digest: retried.body.digest, index: 0 }
    expect([summary(v0), summary(latest)]).toEqual([expected, expected])
    expect(await indexes(caller)).toEqual({ [retried.body.digest]: 0, [next.body.digest]: 1 })
  })

  it('finishes the version when the answer to its claim was lost', async () => {
    // Prepare: the claim is applied, its answer lost; the SDK's retry finds the version already there.
    const caller = await warmCaller()
    proxy.inject({ fault: 'drop-after-apply', operations: ['PutItem'], times: 1 })

    // Act
    const res = await create(caller, 'h', 2)
    proxy.clear()
    const byDigest = await read(caller, 'h', res.body.digest)
    const latest = await read(caller, 'h', 'latest')

    // Assess
    expect(res.status).toBe(200)
    const expected = { status: 200, digest: res.body.digest, index: 0 }
    expect([summary(byDigest), summary(latest)]).toEqual([expected, expected])
  })
})

describe('version indexes are drawn once per version under retried writes', () => {
  it('numbers the first version 0 when the answer to its index draw was lost', async () => {
    // Prepare: the counter update is applied, its answer lost, and the SDK sends it again.
    const caller = await warmCaller()
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 1 })

    // Act
    const first = await create(caller, 'g', 1)
    proxy.clear()
    const second = await create(caller, 'g', 2)
    const v0 = await read(caller, 'g', 'v0')
    const v1 = await read(caller, 'g', 'v1')

    // Assess
    expect([first.status, second.status]).toEqual([200, 200])
    expect(summary(v0)).toEqual({ status: 200, digest: first.body.digest, index: 0 })
    expect(summary(v1)).toEqual({ status: 200, digest: second.body.digest, index: 1 })
  })

  it('numbers concurrent versions 0..n-1 while answers to their writes are lost', async () => {
    // Prepare
    const caller = await warmCaller()
    const values = Array.from({ length: 6 }, (_, i) => ({ v: i }))
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 4 })

    // Act
    const results = await Promise.all(values.map((val) => create(caller, 'raced', val)))
    proxy.clear()
    const stored = await indexes(caller)

    // Assess
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200))
    expect(Object.keys(stored).sort()).toEqual(results.map((r) => r.body.digest).sort())
    expect(Object.values(stored).sort()).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('keeps separate sequences for an op and an object of one id under lost answers', async () => {
    // Prepare
    const caller = await warmCaller()
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 2 })

    // Act
    const obj = await create(caller, 'same', { a: 1 })
    const op = await create(caller, 'same', { _type: 'CustomWeaveType', weave_type: { type: 'Op' }, files: {} })
    proxy.clear()
    const obj2 = await create(caller, 'same', { a: 2 })

    // Assess
    expect([obj.status, op.status, obj2.status]).toEqual([200, 200, 200])
    expect(await indexes(caller)).toEqual({ [obj.body.digest]: 0, [op.body.digest]: 0, [obj2.body.digest]: 1 })
  })
})

describe('re-publishing a deleted value', () => {
  it('succeeds when the answer to the revive was lost', async () => {
    // Prepare
    const caller = await warmCaller()
    const digest = await publish(caller, 'again', { v: 1 })
    await send(deleteObj, '/obj/delete', { project_id: caller.project, object_id: 'again' }, caller)
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 1 })

    // Act
    const res = await create(caller, 'again', { v: 1 })
    proxy.clear()
    const latest = await read(caller, 'again', 'latest')

    // Assess: the version comes back with its old index.
    expect(res.status).toBe(200)
    expect(summary(latest)).toEqual({ status: 200, digest, index: 0 })
  })
})

describe('obj/delete retried after a failure between its writes', () => {
  it("re-points 'latest' to the survivor when the first attempt failed after marking", async () => {
    // Prepare: marking v1 succeeds, re-pointing `latest` (a PutItem) fails.
    const caller = await warmCaller()
    const d0 = await publish(caller, 'o', { a: 0 })
    const d1 = await publish(caller, 'o', { a: 1 })
    const req = { project_id: caller.project, object_id: 'o', digests: [d1] }
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'] })
    const failed = await send(deleteObj, '/obj/delete', req, caller)
    proxy.clear()

    // Act
    const retried = await send(deleteObj, '/obj/delete', req, caller)
    const latest = await read(caller, 'o', 'latest')
    const listed = await send(
      queryObjs,
      '/objs/query',
      { project_id: caller.project, filter: { latest_only: true } },
      caller,
    )

    // Assess: the retry finds nothing left to delete (Weave's 404) but finishes the cleanup first.
    expect(failed.status).toBe(503)
    expect(retried).toEqual({ status: 404, body: { reason: `Object o (['${d1}']) not found when deleting.` } })
    expect(summary(latest)).toEqual({ status: 200, digest: d0, index: 0 })
    expect(listed.body.objs.map((o: { digest: string }) => o.digest)).toEqual([d0])
  })

  it('drops the aliases of a version whose delete failed before removing them', async () => {
    // Prepare: marking v1 succeeds, deleting its alias fails.
    const caller = await warmCaller()
    const d0 = await publish(caller, 'o', { a: 0 })
    const d1 = await publish(caller, 'o', { a: 1 })
    await send(
      setAliases,
      '/objs/o/aliases',
      { project_id: caller.project, digest: d1, aliases: ['prod'] },
      caller,
      'PUT',
    )
    const req = { project_id: caller.project, object_id: 'o', digests: [d1] }
    proxy.inject({ fault: 'unavailable', operations: ['DeleteItem'] })
    const failed = await send(deleteObj, '/obj/delete', req, caller)
    proxy.clear()

    // Act
    await send(deleteObj, '/obj/delete', req, caller)
    const prod = await read(caller, 'o', 'prod')
    const latest = await read(caller, 'o', 'latest')

    // Assess
    expect(failed.status).toBe(503)
    expect(prod).toEqual({ status: 404, body: { reason: 'Obj o:prod not found' } })
    expect(summary(latest)).toEqual({ status: 200, digest: d0, index: 0 })
  })

  it("answers 200 and re-points 'latest' when the answer to the mark was lost", async () => {
    // Prepare: the mark is applied, its answer lost; the SDK's retry finds the version already deleted.
    const caller = await warmCaller()
    const d0 = await publish(caller, 'd', { a: 0 })
    const d1 = await publish(caller, 'd', { a: 1 })
    proxy.inject({ fault: 'drop-after-apply', operations: ['UpdateItem'], times: 1 })

    // Act
    const res = await send(
      deleteObj,
      '/obj/delete',
      { project_id: caller.project, object_id: 'd', digests: [d1] },
      caller,
    )
    proxy.clear()
    const latest = await read(caller, 'd', 'latest')
    const v1 = await read(caller, 'd', 'v1')

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.num_deleted).toBe(1)
    expect(summary(latest)).toEqual({ status: 200, digest: d0, index: 0 })
    expect(v1.status).toBe(404)
    expect(v1.body.reason).toMatch(/^d:v1 was deleted at /)
  })
})
