import { describe, expect, it } from 'vitest'
import { app } from '#functions/tracing/create-obj/handler'
import { app as readApp } from '#functions/tracing/read-obj/handler'
import { newProjectCaller, send } from '../../support/tracing.js'

describe('POST /obj/create', () => {
  it('returns the contract digest and object id', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const res = await send(
      app,
      '/obj/create',
      { obj: { project_id: caller.project, object_id: 'o1', val: { b: 1, a: 'x' } } },
      caller,
    )

    // Assess
    expect(res).toEqual({
      status: 200,
      body: { digest: 'OFgg8Alv1Vj0CRMZ5Yp0LOv4d9w7rKGAmBiJ8cQOyoQ', object_id: 'o1' },
    })
  })

  it('stores a republished value once and keeps its version index', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const create = (v: number) =>
      send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'o', val: { v } } }, caller)

    // Act
    await create(0)
    await create(1)
    const again = await create(0)
    const read = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: 'latest' },
      caller,
    )
    const v1 = await send(readApp, '/obj/read', { project_id: caller.project, object_id: 'o', digest: 'v1' }, caller)

    // Assess: republishing v0 promotes it to latest; no third version exists.
    expect(again.body.digest).toBe('UAVY48kKl3eXtcWIilU664ewzrBtYYiiwTbRUQHenPg')
    expect(read.body.obj).toMatchObject({
      digest: 'UAVY48kKl3eXtcWIilU664ewzrBtYYiiwTbRUQHenPg',
      version_index: 0,
      is_latest: 1,
    })
    expect(v1.body.obj).toMatchObject({
      digest: 'mrIlP8OJgfWXnCXPCjS2LN8zRlI0S97xaz1dvAt08vE',
      version_index: 1,
      is_latest: 0,
    })
    const v2 = await send(readApp, '/obj/read', { project_id: caller.project, object_id: 'o', digest: 'v2' }, caller)
    expect(v2.status).toBe(404)
  })

  it('hashes numbers as sent, as Python json.dumps prints them', async () => {
    // Prepare: Python's digest of this value (floats stay floats, big integers keep their digits).
    const caller = await newProjectCaller()
    const val = '{"a": 1.0, "b": 12345678901234567890, "c": 1e5, "d": -0.0, "e": 2.5e-7, "f": [0.0, 3]}'
    const body = `{"obj": {"project_id": "${caller.project}", "object_id": "nums", "val": ${val}}}`

    // Act
    const res = await app.request('/obj/create', {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body,
    })

    // Assess
    expect(await res.json()).toEqual({ digest: 'Wuul0ks4C7Rj5AMGmSdvgv6vnleJJthhtxK6qF70Hmc', object_id: 'nums' })
  })

  it('creates concurrent copies of one value as a single version', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const body = { obj: { project_id: caller.project, object_id: 'race', val: { data: 'test' } } }

    // Act
    const results = await Promise.all(Array.from({ length: 8 }, () => send(app, '/obj/create', body, caller)))
    await send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'race', val: { v: 1 } } }, caller)
    const second = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'race', digest: 'v1' },
      caller,
    )

    // Assess
    expect(new Set(results.map((r) => r.body.digest))).toEqual(new Set(['pJmtiGOXV1HNNQm9jGko35zeJIrc3GBPmFYQ0iiLJGI']))
    expect(second.body.obj).toMatchObject({ digest: 'mrIlP8OJgfWXnCXPCjS2LN8zRlI0S97xaz1dvAt08vE', version_index: 1 })
  })

  it('answers 409 when expected_digest differs from the computed digest', async () => {
    const caller = await newProjectCaller()
    const res = await send(
      app,
      '/obj/create',
      { obj: { project_id: caller.project, object_id: 'o', val: { v: 0 }, expected_digest: 'nope' } },
      caller,
    )
    // Weave's validate_expected_digest with the label `obj {object_id!r}`.
    expect(res).toEqual({
      status: 409,
      body: { reason: "Client obj 'o' digest nope != server digest UAVY48kKl3eXtcWIilU664ewzrBtYYiiwTbRUQHenPg" },
    })
  })

  it('accepts a matching expected_digest', async () => {
    const caller = await newProjectCaller()
    const res = await send(
      app,
      '/obj/create',
      {
        obj: {
          project_id: caller.project,
          object_id: 'o',
          val: { v: 0 },
          expected_digest: 'UAVY48kKl3eXtcWIilU664ewzrBtYYiiwTbRUQHenPg',
        },
      },
      caller,
    )
    expect(res.status).toBe(200)
  })

  it('derives kind and object classes from the value', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const op = {
      _type: 'CustomWeaveType',
      weave_type: { type: 'Op' },
      files: { 'obj.py': 'abc' },
      load_op: 'NO_LOAD_OP',
    }
    const ds = { _type: 'MyDataset', _class_name: 'MyDataset', _bases: ['Dataset', 'Object', 'BaseModel'], rows: [] }

    // Act
    await send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'my_op', val: op } }, caller)
    await send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'ds', val: ds } }, caller)
    const readOp = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'my_op', digest: 'latest' },
      caller,
    )
    const readDs = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'ds', digest: 'latest' },
      caller,
    )

    // Assess
    expect(readOp.body.obj).toMatchObject({ kind: 'op', base_object_class: null, leaf_object_class: null })
    expect(readDs.body.obj).toMatchObject({
      kind: 'object',
      base_object_class: 'Dataset',
      leaf_object_class: 'MyDataset',
    })
  })

  it('checks builtin_object_class against the value', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const obj = (val: unknown, cls: string) => ({
      obj: { project_id: caller.project, object_id: 'c', val, builtin_object_class: cls },
    })

    // Act
    const nonDict = await send(app, '/obj/create', obj([1], 'Leaderboard'), caller)
    const mismatch = await send(
      app,
      '/obj/create',
      obj({ _class_name: 'A', _bases: ['Object', 'BaseModel'] }, 'Leaderboard'),
      caller,
    )
    const unknown = await send(app, '/obj/create', obj({ x: 1 }, 'Nope'), caller)
    const stamped = await send(app, '/obj/create', obj({ name: 'spec' }, 'AnnotationSpec'), caller)
    const read = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'c', digest: 'latest' },
      caller,
    )

    // Assess
    expect(nonDict).toEqual({ status: 400, body: { reason: 'object_class cannot be provided for non-dict objects' } })
    expect(mismatch).toEqual({
      status: 400,
      body: { reason: "object_class must match val's defined object class: A != Leaderboard" },
    })
    expect(unknown).toEqual({ status: 400, body: { reason: 'Unknown object class: Nope' } })
    expect(stamped.status).toBe(200)
    expect(read.body.obj).toMatchObject({ base_object_class: 'AnnotationSpec', leaf_object_class: 'AnnotationSpec' })
    // The class model fills its defaults (docs/tracing.md §8.2).
    expect(read.body.obj.val).toEqual({
      _type: 'AnnotationSpec',
      name: 'spec',
      description: null,
      field_schema: {},
      unique_among_creators: false,
      op_scope: null,
      _class_name: 'AnnotationSpec',
      _bases: ['BaseObject', 'BaseModel'],
    })
  })

  it('rejects a custom-type file key that escapes its folder', async () => {
    const caller = await newProjectCaller()
    const val = {
      _type: 'CustomWeaveType',
      weave_type: { type: 'Image' },
      files: { '../x.png': 'd' },
      load_op: 'NO_LOAD_OP',
    }
    const res = await send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'img', val } }, caller)
    expect(res).toEqual({ status: 400, body: { reason: 'Invalid file path key' } })
  })

  it('rejects a new version whose base class collides with the live one', async () => {
    const caller = await newProjectCaller()
    const ds = { _type: 'Dataset', _class_name: 'Dataset', _bases: ['Object', 'BaseModel'], rows: 'x' }
    await send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'same', val: ds } }, caller)
    const res = await send(
      app,
      '/obj/create',
      { obj: { project_id: caller.project, object_id: 'same', val: { plain: 1 } } },
      caller,
    )
    expect(res.status).toBe(400)
  })

  it('checks the class against live versions of the same kind when latest is an op of the same name', async () => {
    const caller = await newProjectCaller()
    const create = (val: unknown) =>
      send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'shared', val } }, caller)
    const ds = { _type: 'Dataset', _class_name: 'Dataset', _bases: ['Object', 'BaseModel'], rows: 'x' }
    const op = {
      _type: 'CustomWeaveType',
      weave_type: { type: 'Op' },
      files: { 'obj.py': 'abc' },
      load_op: 'NO_LOAD_OP',
    }

    expect((await create(ds)).status).toBe(200)
    expect((await create(op)).status).toBe(200)
    const plain = await create({ plain: 1 })
    const anotherDataset = await create({ ...ds, rows: 'y' })

    expect(plain).toEqual({
      status: 400,
      body: {
        reason: "Object name 'shared' is already used by an object of class Dataset; cannot create one of class None",
      },
    })
    expect(anotherDataset.status).toBe(200)
  })

  it('stores a value larger than the DynamoDB item limit whole', async () => {
    // Prepare: about 1.2 MB of JSON, non-ASCII included, so it must be split across items.
    const caller = await newProjectCaller()
    const big = { text: 'é😀'.repeat(60_000), list: Array.from({ length: 20_000 }, (_, i) => ({ i, s: `row-${i}` })) }

    // Act
    const created = await send(
      app,
      '/obj/create',
      { obj: { project_id: caller.project, object_id: 'big', val: big } },
      caller,
    )
    const read = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'big', digest: created.body.digest },
      caller,
    )

    // Assess
    expect(created.status).toBe(200)
    expect(read.status).toBe(200)
    expect(JSON.stringify(read.body.obj.val)).toBe(JSON.stringify(big))
    expect(read.body.obj.size_bytes).toBeNull()
  })

  it('answers 422 for a body without obj, a missing val and an invalid object id', async () => {
    const caller = await newProjectCaller()
    const noObj = await send(app, '/obj/create', {}, caller)
    const noVal = await send(app, '/obj/create', { obj: { project_id: caller.project, object_id: 'x' } }, caller)
    const badId = await send(
      app,
      '/obj/create',
      { obj: { project_id: caller.project, object_id: 'a/b', val: 1 } },
      caller,
    )
    const longId = await send(
      app,
      '/obj/create',
      { obj: { project_id: caller.project, object_id: 'a'.repeat(129), val: 1 } },
      caller,
    )
    expect(noObj.status).toBe(422)
    expect(noObj.body.detail[0].loc).toEqual(['body', 'obj'])
    expect(noVal.status).toBe(422)
    expect(badId.status).toBe(422)
    expect(longId.status).toBe(422)
  })

  it('answers 422 for malformed JSON', async () => {
    const caller = await newProjectCaller()
    const res = await app.request('/obj/create', {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body: '{"obj":',
    })
    expect(res.status).toBe(422)
  })

  it('answers 401 without credentials and 403 on a project of another entity', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const anon = await app.request('/obj/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ obj: { project_id: a.project, object_id: 'x', val: 1 } }),
    })
    const foreign = await send(app, '/obj/create', { obj: { project_id: b.project, object_id: 'x', val: 1 } }, a)
    expect(anon.status).toBe(401)
    expect(foreign.status).toBe(403)
    expect(typeof foreign.body.reason).toBe('string')
  })
})
