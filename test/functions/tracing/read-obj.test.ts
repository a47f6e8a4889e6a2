import { describe, expect, it } from 'vitest'
import { app as deleteApp } from '#functions/tracing/delete-obj/handler'
import { app } from '#functions/tracing/read-obj/handler'
import { app as aliasApp } from '#functions/tracing/set-obj-aliases/handler'
import { publish, publishText, sendText } from '../../support/objects.js'
import { newProjectCaller, send } from '../../support/tracing.js'

const D0 = 'UAVY48kKl3eXtcWIilU664ewzrBtYYiiwTbRUQHenPg'
const D1 = 'mrIlP8OJgfWXnCXPCjS2LN8zRlI0S97xaz1dvAt08vE'

describe('POST /obj/read', () => {
  it('returns the full ObjSchema by content digest', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await publish(caller, 'o', { v: 0 })

    // Act
    const res = await send(app, '/obj/read', { project_id: caller.project, object_id: 'o', digest: D0 }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.obj).toEqual({
      project_id: caller.project,
      object_id: 'o',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      deleted_at: null,
      digest: D0,
      version_index: 0,
      is_latest: 1,
      kind: 'object',
      base_object_class: null,
      leaf_object_class: null,
      val: { v: 0 },
      wb_user_id: caller.userId,
      size_bytes: null,
      tags: null,
      aliases: null,
    })
  })

  it('resolves latest, v<N> spelled the Python way, and aliases', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await publish(caller, 'o', { v: 0 })
    await publish(caller, 'o', { v: 1 })
    await send(
      aliasApp,
      '/objs/o/aliases',
      { project_id: caller.project, digest: D0, aliases: ['prod'] },
      caller,
      'PUT',
    )
    const read = (digest: string) =>
      send(app, '/obj/read', { project_id: caller.project, object_id: 'o', digest }, caller)

    // Act
    // Python's int() reads decimal digits of any script: Arabic-Indic, fullwidth, Devanagari, mathematical (QA).
    const names = ['latest', 'v0', 'v01', 'v+1', 'v 0', 'prod', 'v\u0661', 'v\uff10', 'v\u0967', 'v\u{1D7D8}\u{1D7D9}']
    const results = await Promise.all(names.map(read))

    // Assess
    expect(results.map((r) => r.body.obj?.digest)).toEqual([D1, D0, D1, D1, D0, D0, D1, D0, D1, D1])
    expect(results.map((r) => r.body.obj?.is_latest)).toEqual([1, 0, 1, 1, 0, 0, 1, 0, 1, 1])
  })

  it('answers 404 naming the request for unknown objects, versions and aliases', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await publish(caller, 'o2', { v: 0 })
    const read = (objectId: string, digest: string) =>
      send(app, '/obj/read', { project_id: caller.project, object_id: objectId, digest }, caller)

    // Act
    const [v7, missing, alias, negative] = await Promise.all([
      read('o2', 'v7'),
      read('nope', 'latest'),
      read('o2', 'staging'),
      read('o2', 'v-1'),
    ])

    // Assess
    expect(v7).toEqual({ status: 404, body: { reason: 'Obj o2:v7 not found' } })
    expect(missing).toEqual({ status: 404, body: { reason: 'Obj nope:latest not found' } })
    expect(alias).toEqual({ status: 404, body: { reason: 'Obj o2:staging not found' } })
    expect(negative).toEqual({ status: 404, body: { reason: 'Obj o2:v-1 not found' } })
  })

  it('answers 404 with deleted_at for a deleted version, by digest and by index', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await publish(caller, 'o', { v: 0 })
    await publish(caller, 'o', { v: 1 })
    await send(deleteApp, '/obj/delete', { project_id: caller.project, object_id: 'o', digests: [D0] }, caller)

    // Act
    const byDigest = await send(app, '/obj/read', { project_id: caller.project, object_id: 'o', digest: D0 }, caller)
    const byIndex = await send(app, '/obj/read', { project_id: caller.project, object_id: 'o', digest: 'v0' }, caller)

    // Assess
    expect(byDigest.status).toBe(404)
    expect(byDigest.body).toEqual({
      reason: `o:v0 was deleted at ${byDigest.body.deleted_at}`,
      deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    expect(byIndex.body).toEqual(byDigest.body)
  })

  it('returns an empty val with metadata_only and labels with include_tags_and_aliases', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await publish(caller, 'o', { v: 0 })

    // Act
    const meta = await send(
      app,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: D0, metadata_only: true },
      caller,
    )
    const labelled = await send(
      app,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: D0, include_tags_and_aliases: true },
      caller,
    )

    // Assess
    expect(meta.body.obj.val).toEqual({})
    expect(meta.body.obj.digest).toBe(D0)
    expect(labelled.body.obj).toMatchObject({ tags: [], aliases: ['latest'], val: { v: 0 } })
  })

  it('answers numbers as created: whole floats as floats, big integers with all their digits', async () => {
    // Prepare: what Weave answers with json.loads(val_dump) and a Python client reads back.
    const caller = await newProjectCaller()
    const digest = await publishText(
      caller,
      'nums',
      '{"score": 1.0, "seed": 12345678901234567891, "big": 1e20, "l": [2.0, 3]}',
    )

    // Act
    const res = await sendText(
      app,
      '/obj/read',
      { project_id: caller.project, object_id: 'nums', digest: 'latest' },
      caller,
    )

    // Assess
    expect(res.status).toBe(200)
    expect(res.text).toContain(`"digest":"${digest}"`)
    expect(res.text).toContain('"val":{"score":1.0,"seed":12345678901234567891,"big":1e+20,"l":[2.0,3]}')
  })

  it('keeps version indexes with a gap after a delete', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'g', { n: 0 })
    const d1 = await publish(caller, 'g', { n: 1 })
    const d2 = await publish(caller, 'g', { n: 2 })
    await send(deleteApp, '/obj/delete', { project_id: caller.project, object_id: 'g', digests: [d1] }, caller)

    // Act
    const d3 = await publish(caller, 'g', { n: 3 })
    const read = (digest: string) =>
      send(app, '/obj/read', { project_id: caller.project, object_id: 'g', digest }, caller)
    const results = await Promise.all([d0, d2, d3].map(read))

    // Assess
    expect(results.map((r) => r.body.obj.version_index)).toEqual([0, 2, 3])
  })

  it('keeps separate version sequences for an op and an object with the same id', async () => {
    const caller = await newProjectCaller()
    await publish(caller, 'shared', { v: 0 })
    const op = { _type: 'CustomWeaveType', weave_type: { type: 'Op' }, files: { 'obj.py': 'x' }, load_op: 'NO_LOAD_OP' }
    const opDigest = await publish(caller, 'shared', op)
    const res = await send(
      app,
      '/obj/read',
      { project_id: caller.project, object_id: 'shared', digest: opDigest },
      caller,
    )
    expect(res.body.obj).toMatchObject({ kind: 'op', version_index: 0, is_latest: 1 })
  })

  it('answers 422 for a missing digest and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    await publish(b, 'o', { v: 0 })
    const missing = await send(app, '/obj/read', { project_id: a.project, object_id: 'o' }, a)
    const foreign = await send(app, '/obj/read', { project_id: b.project, object_id: 'o', digest: 'latest' }, a)
    expect(missing.status).toBe(422)
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'digest'], type: 'missing' })
    expect(foreign.status).toBe(403)
  })
})
