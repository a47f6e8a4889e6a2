import { describe, expect, it } from 'vitest'
import { app as tagApp } from '#functions/tracing/add-obj-tags/handler'
import { app as deleteApp } from '#functions/tracing/delete-obj/handler'
import { app } from '#functions/tracing/query-objs/handler'
import { app as aliasApp } from '#functions/tracing/set-obj-aliases/handler'
import { publish, publishText, sendText } from '../../support/objects.js'
import { newProjectCaller, send } from '../../support/tracing.js'

const OP = { _type: 'CustomWeaveType', weave_type: { type: 'Op' }, files: { 'obj.py': 'x' }, load_op: 'NO_LOAD_OP' }
const dataset = (rows: string) => ({ _type: 'Dataset', _class_name: 'Dataset', _bases: ['Object', 'BaseModel'], rows })

describe('POST /objs/query', () => {
  it('lists live versions oldest first by default, with is_latest per object', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const a0 = await publish(caller, 'a', { v: 0 })
    const b0 = await publish(caller, 'b', { v: 0 })
    const a1 = await publish(caller, 'a', { v: 1 })
    const gone = await publish(caller, 'c', { v: 9 })
    await send(deleteApp, '/obj/delete', { project_id: caller.project, object_id: 'c', digests: [gone] }, caller)

    // Act
    const res = await send(app, '/objs/query', { project_id: caller.project }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(
      res.body.objs.map((o: { object_id: string; digest: string; is_latest: number; version_index: number }) => [
        o.object_id,
        o.digest,
        o.version_index,
        o.is_latest,
      ]),
    ).toEqual([
      ['a', a0, 0, 0],
      ['b', b0, 0, 1],
      ['a', a1, 1, 1],
    ])
  })

  it('filters by is_op, latest_only, object_ids, classes, tags and aliases', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const op = await publish(caller, 'my_op', OP)
    const ds0 = await publish(caller, 'ds', dataset('r0'))
    const ds1 = await publish(caller, 'ds', dataset('r1'))
    const plain = await publish(caller, 'plain', { x: 1 })
    await send(tagApp, `/objs/ds/versions/${ds0}/tags`, { project_id: caller.project, tags: ['gold'] }, caller, 'PUT')
    await send(
      aliasApp,
      '/objs/plain/aliases',
      { project_id: caller.project, digest: plain, aliases: ['prod'] },
      caller,
      'PUT',
    )
    const query = async (filter: unknown) =>
      (await send(app, '/objs/query', { project_id: caller.project, filter }, caller)).body.objs.map(
        (o: { digest: string }) => o.digest,
      )

    // Act
    const [ops, nonOps, latest, byId, byClass, excluded, byTag, byAlias, latestAlias, both] = await Promise.all([
      query({ is_op: true }),
      query({ is_op: false }),
      query({ latest_only: true }),
      query({ object_ids: ['ds'] }),
      query({ base_object_classes: ['Dataset'] }),
      query({ exclude_base_object_classes: ['Dataset'] }),
      query({ tags: ['gold', 'silver'] }),
      query({ aliases: ['prod'] }),
      query({ aliases: ['latest'], object_ids: ['ds'] }),
      query({ tags: ['gold'], aliases: ['latest'] }),
    ])

    // Assess
    expect(ops).toEqual([op])
    expect(nonOps).toEqual([ds0, ds1, plain])
    expect(latest).toEqual([op, ds1, plain])
    expect(byId).toEqual([ds0, ds1])
    expect(byClass).toEqual([ds0, ds1])
    expect(excluded).toEqual([op, plain])
    expect(byTag).toEqual([ds0])
    expect(byAlias).toEqual([plain])
    expect(latestAlias).toEqual([ds1])
    expect(both).toEqual([])
  })

  it('sorts by object_id and created_at, pages, and adds sizes and labels on request', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await publish(caller, 'b', { v: 0 })
    await publish(caller, 'a', { v: 0 })
    await publish(caller, 'c', { v: 0 })

    // Act
    const sorted = await send(
      app,
      '/objs/query',
      { project_id: caller.project, sort_by: [{ field: 'object_id', direction: 'desc' }], limit: 2, offset: 1 },
      caller,
    )
    const meta = await send(
      app,
      '/objs/query',
      {
        project_id: caller.project,
        metadata_only: true,
        include_storage_size: true,
        include_tags_and_aliases: true,
        limit: 1,
      },
      caller,
    )

    // Assess
    expect(sorted.body.objs.map((o: { object_id: string }) => o.object_id)).toEqual(['b', 'a'])
    expect(meta.body.objs).toHaveLength(1)
    expect(meta.body.objs[0]).toMatchObject({ object_id: 'b', val: {}, size_bytes: 8, tags: [], aliases: ['latest'] })
  })

  it('answers numbers as created, and size_bytes as the length of Python json.dumps of the value', async () => {
    // Prepare: json.dumps gives {"score": 1.0, "name": "\u00e9", "seed": 12345678901234567891} (62 characters).
    const caller = await newProjectCaller()
    await publishText(caller, 'nums', '{"score": 1.0, "name": "é", "seed": 12345678901234567891}')
    await publishText(caller, 'plain', '{"a": 1}')

    // Act
    const res = await sendText(
      app,
      '/objs/query',
      { project_id: caller.project, include_storage_size: true, sort_by: [{ field: 'object_id', direction: 'asc' }] },
      caller,
    )

    // Assess
    expect(res.status).toBe(200)
    expect(res.text).toContain('"val":{"score":1.0,"name":"é","seed":12345678901234567891}')
    expect(JSON.parse(res.text).objs.map((o: { size_bytes: number }) => o.size_bytes)).toEqual([62, 8])
  })

  it('answers 422 for a negative limit and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const bad = await send(app, '/objs/query', { project_id: a.project, limit: -1 }, a)
    const foreign = await send(app, '/objs/query', { project_id: b.project }, a)
    expect(bad.status).toBe(422)
    expect(foreign.status).toBe(403)
  })
})
