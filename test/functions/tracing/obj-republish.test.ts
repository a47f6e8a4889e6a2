import { describe, expect, it } from 'vitest'
import { app as deleteApp } from '#functions/tracing/delete-obj/handler'
import { app as queryApp } from '#functions/tracing/query-objs/handler'
import { app as readApp } from '#functions/tracing/read-obj/handler'
import { publish, publishText, sendText } from '../../support/objects.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

// Re-publishing after deletes, as the reference's object tests pin it (tests/trace/test_obj_delete.py, the
// version-index stability tests and tests/trace_server's MV-backed version_index tests; docs/tracing.md §8.3).

type Obj = { digest: string; version_index: number; is_latest: number; val: unknown; created_at: string }

async function versions(caller: ProjectCaller, objectId: string, latestOnly = false): Promise<Obj[]> {
  const res = await send(
    queryApp,
    '/objs/query',
    {
      project_id: caller.project,
      filter: { object_ids: [objectId], latest_only: latestOnly },
      sort_by: [{ field: 'created_at', direction: 'asc' }],
    },
    caller,
  )
  return res.body.objs
}

async function remove(caller: ProjectCaller, objectId: string, digests: string[] | null) {
  return send(deleteApp, '/obj/delete', { project_id: caller.project, object_id: objectId, digests }, caller)
}

async function read(caller: ProjectCaller, objectId: string, digest: string) {
  return send(readApp, '/obj/read', { project_id: caller.project, object_id: objectId, digest }, caller)
}

const summary = (objs: Obj[]) => objs.map((o) => [o.digest, o.version_index, o.is_latest])

describe('re-publishing deleted object versions', () => {
  it('keeps the other versions’ indices when one is deleted and numbers the next version after all (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const v0 = await publish(caller, 'obj_1', { i: 1 })
    const v1 = await publish(caller, 'obj_1', { i: 2 })
    const v2 = await publish(caller, 'obj_1', { i: 3 })

    // Act
    await remove(caller, 'obj_1', [v1])
    const afterDelete = await versions(caller, 'obj_1')
    const v3 = await publish(caller, 'obj_1', { i: 4 })
    const afterPublish = await versions(caller, 'obj_1')
    await remove(caller, 'obj_1', [v3])
    const afterSecondDelete = await versions(caller, 'obj_1')

    // Assess
    expect(summary(afterDelete)).toEqual([
      [v0, 0, 0],
      [v2, 2, 1],
    ])
    expect(summary(afterPublish)).toEqual([
      [v0, 0, 0],
      [v2, 2, 0],
      [v3, 3, 1],
    ])
    expect(summary(afterSecondDelete)).toEqual([
      [v0, 0, 0],
      [v2, 2, 1],
    ])
  })

  it('revives a deleted version re-published with its digest at its first index, as the latest', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const a = await publish(caller, 'idx', { text: 'A' })
    const b = await publish(caller, 'idx', { text: 'B' })
    const c = await publish(caller, 'idx', { text: 'C' })
    await remove(caller, 'idx', [b])
    const deletedRead = await read(caller, 'idx', b)

    // Act
    const again = await publish(caller, 'idx', { text: 'B' })
    const objs = await versions(caller, 'idx')
    const byIndex = await read(caller, 'idx', 'v1')
    const latest = await read(caller, 'idx', 'latest')

    // Assess
    expect(deletedRead.status).toBe(404)
    expect(again).toBe(b)
    // B keeps v1 (its first publication) and, re-created last, is the newest by created_at and the latest.
    expect(summary(objs)).toEqual([
      [a, 0, 0],
      [c, 2, 0],
      [b, 1, 1],
    ])
    expect((objs[2]?.created_at ?? '') > (objs[1]?.created_at ?? '')).toBe(true)
    expect(byIndex.body.obj).toMatchObject({ digest: b, val: { text: 'B' }, deleted_at: null })
    expect(latest.body.obj).toMatchObject({ digest: b, version_index: 1, is_latest: 1 })
  })

  it('shows a new value published after its only version was deleted (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const v0 = await publish(caller, 'obj_1', { i: 1 })
    await remove(caller, 'obj_1', [v0])

    // Act
    const v1 = await publish(caller, 'obj_1', { i: 2 })
    const objs = await versions(caller, 'obj_1')

    // Assess
    expect(objs.map((o) => [o.digest, o.val, o.version_index, o.is_latest])).toEqual([[v1, { i: 2 }, 1, 1]])
  })

  it.each([
    ['the deleted first value', { i: 1 }, 0],
    ['a new value', { i: 99 }, 2],
  ])(
    'shows %s re-published after every version was deleted, also to latest_only (reference test)',
    async (_, val, index) => {
      // Prepare
      const caller = await newProjectCaller()
      await publish(caller, 'obj_1', { i: 1 })
      await publish(caller, 'obj_1', { i: 2 })
      const deleted = await remove(caller, 'obj_1', null)
      const emptied = await versions(caller, 'obj_1')

      // Act
      const digest = await publish(caller, 'obj_1', val)
      const objs = await versions(caller, 'obj_1')
      const latest = await versions(caller, 'obj_1', true)
      const read0 = await read(caller, 'obj_1', 'latest')

      // Assess
      expect(deleted.body.num_deleted).toBe(2)
      expect(emptied).toEqual([])
      expect(objs.map((o) => [o.digest, o.val, o.version_index, o.is_latest])).toEqual([[digest, val, index, 1]])
      expect(latest.map((o) => o.digest)).toEqual([digest])
      expect(read0.body.obj).toMatchObject({ digest, is_latest: 1 })
    },
  )

  it('lists a re-published dataset under its base class with latest_only after deleting all versions (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const dataset = (rows: string) => ({
      _type: 'Dataset',
      _class_name: 'Dataset',
      _bases: ['Object', 'BaseModel'],
      rows,
    })
    const r0 = await publish(caller, 'my_ds', dataset('weave:///t/1'))
    await publish(caller, 'my_ds', dataset('weave:///t/2'))
    await remove(caller, 'my_ds', null)
    const query = (latestOnly: boolean) =>
      send(
        queryApp,
        '/objs/query',
        { project_id: caller.project, filter: { base_object_classes: ['Dataset'], latest_only: latestOnly } },
        caller,
      )
    const emptied = await query(false)

    // Act
    const r2 = await publish(caller, 'my_ds', dataset('weave:///t/1'))
    const latest = await query(true)
    const all = await query(false)

    // Assess
    expect(emptied.body.objs).toEqual([])
    expect(r2).toBe(r0)
    expect(latest.body.objs.map((o: Obj & { object_id: string }) => [o.object_id, o.digest, o.is_latest])).toEqual([
      ['my_ds', r2, 1],
    ])
    expect(all.body.objs.map((o: Obj) => o.digest)).toEqual([r2])
  })

  it('re-publishing a value as read back gives the same digest and no new version', async () => {
    // Prepare: a Python client republishes json.loads of what obj/read answered.
    const caller = await newProjectCaller()
    const digest = await publishText(caller, 'cfg', '{"score": 1.0, "seed": 12345678901234567891}')
    const read = await sendText(readApp, '/obj/read', { project_id: caller.project, object_id: 'cfg', digest }, caller)
    const valText = /"val":(\{[^}]*\})/.exec(read.text)?.[1] ?? 'null'

    // Act
    const again = await publishText(caller, 'cfg', valText)

    // Assess
    expect(again).toBe(digest)
    expect(summary(await versions(caller, 'cfg'))).toEqual([[digest, 0, 1]])
  })
})
