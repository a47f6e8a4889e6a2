import { describe, expect, it } from 'vitest'
import { app as tagApp } from '#functions/tracing/add-obj-tags/handler'
import { app } from '#functions/tracing/delete-obj/handler'
import { app as aliasesApp } from '#functions/tracing/list-aliases/handler'
import { app as tagsApp } from '#functions/tracing/list-tags/handler'
import { app as readApp } from '#functions/tracing/read-obj/handler'
import { app as aliasApp } from '#functions/tracing/set-obj-aliases/handler'
import { publish } from '../../support/objects.js'
import { get, newProjectCaller, send } from '../../support/tracing.js'

describe('POST /obj/delete', () => {
  it('deletes the latest version and re-points latest to the newest survivor', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    const d1 = await publish(caller, 'o', { v: 1 })

    // Act
    const res = await send(
      app,
      '/obj/delete',
      { project_id: caller.project, object_id: 'o', digests: ['latest'] },
      caller,
    )
    const latest = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: 'latest' },
      caller,
    )

    // Assess
    expect(res).toEqual({
      status: 200,
      body: { num_deleted: 1, deleted_versions: [{ digest: d1, base_object_class: null, leaf_object_class: null }] },
    })
    expect(latest.body.obj).toMatchObject({ digest: d0, is_latest: 1, version_index: 0 })
  })

  it('deletes every version when digests is null and removes their tags and aliases', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    await publish(caller, 'o', { v: 1 })
    await send(tagApp, `/objs/o/versions/${d0}/tags`, { project_id: caller.project, tags: ['t1'] }, caller, 'PUT')
    await send(
      aliasApp,
      '/objs/o/aliases',
      { project_id: caller.project, digest: d0, aliases: ['prod'] },
      caller,
      'PUT',
    )

    // Act
    const res = await send(app, '/obj/delete', { project_id: caller.project, object_id: 'o' }, caller)
    const latest = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: 'latest' },
      caller,
    )
    const tags = await get(tagsApp, `/tags?project_id=${encodeURIComponent(caller.project)}`, caller)
    const aliases = await get(aliasesApp, `/aliases?project_id=${encodeURIComponent(caller.project)}`, caller)

    // Assess
    expect(res.body.num_deleted).toBe(2)
    expect(latest).toEqual({ status: 404, body: { reason: 'Obj o:latest not found' } })
    expect(tags.body).toEqual({ tags: [] })
    expect(aliases.body).toEqual({ aliases: [] })
  })

  it('deletes every version for an empty digests list, as for null (reference: `if req.digests:`)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await publish(caller, 'o', { v: 0 })
    await publish(caller, 'o', { v: 1 })

    // Act
    const res = await send(app, '/obj/delete', { project_id: caller.project, object_id: 'o', digests: [] }, caller)
    const again = await send(app, '/obj/delete', { project_id: caller.project, object_id: 'o', digests: [] }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.num_deleted).toBe(2)
    expect(again).toEqual({ status: 404, body: { reason: 'Object o ([]) not found when deleting.' } })
  })

  it('answers 404 when nothing is left to delete', async () => {
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    await send(app, '/obj/delete', { project_id: caller.project, object_id: 'o', digests: [d0] }, caller)
    const again = await send(app, '/obj/delete', { project_id: caller.project, object_id: 'o', digests: [d0] }, caller)
    const missing = await send(app, '/obj/delete', { project_id: caller.project, object_id: 'nope' }, caller)
    expect(again).toEqual({ status: 404, body: { reason: `Object o (['${d0}']) not found when deleting.` } })
    expect(missing).toEqual({ status: 404, body: { reason: 'Object nope (None) not found when deleting.' } })
  })

  it('refuses the whole request with 404 when any digest is unknown among known ones (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const v0 = await publish(caller, 'obj_mixed', { i: 1 })
    const v1 = await publish(caller, 'obj_mixed', { i: 2 })
    const d0 = await publish(caller, 'obj_dup', { i: 1 })

    // Act
    const mixed = await send(
      app,
      '/obj/delete',
      { project_id: p, object_id: 'obj_mixed', digests: [v0, 'invalid-digest', v1] },
      caller,
    )
    const after = await send(readApp, '/obj/read', { project_id: p, object_id: 'obj_mixed', digest: v0 }, caller)
    const aliasTwice = await send(
      app,
      '/obj/delete',
      { project_id: p, object_id: 'obj_mixed', digests: ['latest', v1] },
      caller,
    )
    const dup = await send(app, '/obj/delete', { project_id: p, object_id: 'obj_dup', digests: [d0, d0] }, caller)
    const byAlias = await send(
      app,
      '/obj/delete',
      { project_id: p, object_id: 'obj_mixed', digests: ['latest'] },
      caller,
    )
    const byVersion = await send(app, '/obj/delete', { project_id: p, object_id: 'obj_mixed', digests: ['v0'] }, caller)

    // Assess
    expect(mixed).toEqual({
      status: 404,
      body: {
        reason: "Delete request contains 3 digests, but found 2 objects to delete. Diff digests: {'invalid-digest'}",
      },
    })
    expect(after.status).toBe(200)
    // `latest` and v1 name one version: two digests given, one found, and the alias counts as not found.
    expect(aliasTwice).toEqual({
      status: 404,
      body: { reason: "Delete request contains 2 digests, but found 1 objects to delete. Diff digests: {'latest'}" },
    })
    expect(dup.body.num_deleted).toBe(1)
    expect(byAlias.body.num_deleted).toBe(1)
    expect(byVersion.body.num_deleted).toBe(1)
  })

  it('answers 400 for more than 100 digests and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const many = Array.from({ length: 101 }, (_, i) => `d${i}`)
    const tooMany = await send(app, '/obj/delete', { project_id: a.project, object_id: 'o', digests: many }, a)
    const foreign = await send(app, '/obj/delete', { project_id: b.project, object_id: 'o' }, a)
    expect(tooMany).toEqual({
      status: 400,
      body: { reason: 'Object delete request contains 101 objects. Please delete 100 or fewer objects at a time.' },
    })
    expect(foreign.status).toBe(403)
  })
})
