import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as createTableApp } from '#functions/tracing/create-table/handler'
import { app as deleteApp } from '#functions/tracing/delete-obj/handler'
import { app, handler } from '#functions/tracing/read-refs-batch/handler'
import { newCaller } from '../../support/auth.js'
import { authorizerFor } from '../../support/calls.js'
import { restEvent } from '../../support/events.js'
import { watchDynamoInFlight } from '../../support/hold-dynamo.js'
import { invokeLambda } from '../../support/lambda-invoke.js'
import { publish, publishText, sendText } from '../../support/objects.js'
import { newProjectCaller, type ProjectCaller, type Res, send } from '../../support/tracing.js'

const read = (caller: ProjectCaller, refs: unknown): Promise<Res> => send(app, '/refs/read_batch', { refs }, caller)

const objRef = (project: string, name: string, digest: string, extra = '') =>
  `weave:///${project}/object/${name}:${digest}${extra}`

/** Creates a table of `rows` in the caller's project; its digest and row digests. */
async function table(caller: ProjectCaller, rows: unknown[]): Promise<{ digest: string; row_digests: string[] }> {
  const res = await send(createTableApp, '/table/create', { table: { project_id: caller.project, rows } }, caller)
  if (res.status !== 200) throw new Error(`table/create failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

/** A dataset as the SDKs publish one: an object whose `rows` is a ref to a table. */
async function dataset(caller: ProjectCaller, name: string, rows: unknown[]) {
  const t = await table(caller, rows)
  const digest = await publish(caller, name, { _type: 'Dataset', rows: `weave:///${caller.project}/table/${t.digest}` })
  return { digest, table: t.digest, rowDigests: t.row_digests, ref: objRef(caller.project, name, digest) }
}

describe('POST /refs/read_batch', () => {
  let caller: ProjectCaller
  let doc: string
  let text: string
  beforeAll(async () => {
    caller = await newProjectCaller()
    doc = await publish(caller, 'doc', {
      title: 'Loom',
      tags: ['a', 'b', 'c'],
      nested: { 'a/b': 1, café: 2, 'x+y': 3, deep: { list: [{ v: 'found' }] } },
      none: null,
      word: 'héllo',
    })
    text = await publish(caller, 'text', 'just a string')
  })

  it('answers each ref’s value in request order, duplicates included', async () => {
    // Act
    const res = await read(caller, [
      objRef(caller.project, 'text', text),
      objRef(caller.project, 'doc', doc),
      objRef(caller.project, 'text', text),
    ])

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.vals).toHaveLength(3)
    expect(res.body.vals[0]).toBe('just a string')
    expect(res.body.vals[1]).toMatchObject({ title: 'Loom', tags: ['a', 'b', 'c'] })
    expect(res.body.vals[2]).toBe('just a string')
  })

  it('answers an empty list for no refs', async () => {
    // Act
    const res = await read(caller, [])

    // Assess
    expect(res).toEqual({ status: 200, body: { vals: [] } })
  })

  it('reads op refs as objects', async () => {
    // Prepare
    const op = { _type: 'CustomWeaveType', weave_type: { type: 'Op' }, files: { 'obj.py': 'abc' } }
    const digest = await publish(caller, 'my_op', op)

    // Act
    const res = await read(caller, [`weave:///${caller.project}/op/my_op:${digest}`])

    // Assess
    expect(res).toEqual({ status: 200, body: { vals: [op] } })
  })

  it('walks key, attr and index edges, percent-decoded, with Python’s int() and negative indexes', async () => {
    // Prepare
    const paths = [
      '/attr/title',
      '/key/tags/index/0',
      '/key/tags/index/-1',
      '/key/tags/index/%201',
      '/key/tags/index/+2',
      '/key/nested/key/a%2Fb',
      '/key/nested/key/caf%C3%A9',
      '/key/nested/key/x+y',
      '/attr/nested/attr/deep/key/list/index/0/key/v',
      '/key/word/index/1',
      '/',
    ]

    // Act
    const res = await read(
      caller,
      paths.map((p) => objRef(caller.project, 'doc', doc, p)),
    )

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.vals.slice(0, -1)).toEqual(['Loom', 'a', 'c', 'b', 'c', 1, 2, 3, 'found', 'é'])
    expect(res.body.vals.at(-1)).toMatchObject({ title: 'Loom' })
  })

  it('answers null for a path that finds nothing: a missing key, an index out of range, the wrong kind of value', async () => {
    // Prepare
    const paths = [
      '/key/missing',
      '/key/missing/key/further',
      '/key/none',
      '/key/none/key/x',
      '/key/tags/index/3',
      '/key/tags/index/-4',
      '/key/tags/key/0',
      '/key/nested/index/0',
      '/key/title/key/x',
      '/key/constructor',
      '/key/__proto__',
    ]

    // Act
    const res = await read(
      caller,
      paths.map((p) => objRef(caller.project, 'doc', doc, p)),
    )

    // Assess
    expect(res).toEqual({ status: 200, body: { vals: paths.map(() => null) } })
  })

  it('answers numbers as they were stored (1.0, integers beyond 2^53), as obj/read and table/query do', async () => {
    // Prepare
    const digest = await publishText(
      caller,
      'numbers',
      '{"f": 1.0, "big": 123456789012345678901234567890, "n": [2.50]}',
    )
    const created = await sendText(
      createTableApp,
      '/table/create',
      `{"table": {"project_id": ${JSON.stringify(caller.project)}, "rows": [{"x": 1.0}]}}`,
      caller,
    )
    const t = JSON.parse(created.text) as { digest: string; row_digests: string[] }
    const ds = await publish(caller, 'exact-ds', { rows: `weave:///${caller.project}/table/${t.digest}` })

    // Act
    const res = await sendText(
      app,
      '/refs/read_batch',
      {
        refs: [
          objRef(caller.project, 'numbers', digest),
          objRef(caller.project, 'numbers', digest, '/key/f'),
          objRef(caller.project, 'exact-ds', ds, `/attr/rows/id/${t.row_digests[0]}`),
        ],
      },
      caller,
    )

    // Assess
    expect(res.status).toBe(200)
    expect(res.text).toBe('{"vals":[{"f":1.0,"big":123456789012345678901234567890,"n":[2.5]},1.0,{"x":1.0}]}')
  })

  it('reads through refs met on the way, going on with the rest of the path (and a nested ref’s own path)', async () => {
    // Prepare
    const inner = await publish(caller, 'inner', { x: { y: 'deep' }, list: [1, 2] })
    const outer = await publish(caller, 'outer', {
      child: objRef(caller.project, 'inner', inner),
      pointer: objRef(caller.project, 'inner', inner, '/key/x'),
      kids: [objRef(caller.project, 'inner', inner)],
    })
    const ref = (extra: string) => objRef(caller.project, 'outer', outer, extra)

    // Act
    const res = await read(caller, [
      ref('/key/child/key/x/key/y'),
      ref('/key/pointer/key/y'),
      ref('/key/kids/index/0/key/list/index/1'),
      ref('/key/child'),
    ])

    // Assess
    expect(res).toEqual({
      status: 200,
      body: { vals: ['deep', 'deep', 2, objRef(caller.project, 'inner', inner)] },
    })
  })

  it('reads dataset rows through the table ref with the id edge, and goes on into the row', async () => {
    // Prepare
    const d = await dataset(caller, 'ds', [
      { q: 'first', n: 1 },
      { q: 'second', n: 2 },
    ])

    // Act
    const res = await read(caller, [
      `${d.ref}/attr/rows/id/${d.rowDigests[1]}`,
      `${d.ref}/attr/rows/id/${d.rowDigests[0]}/key/q`,
      `${d.ref}/attr/rows`,
    ])

    // Assess
    expect(res).toEqual({
      status: 200,
      body: { vals: [{ q: 'second', n: 2 }, 'first', `weave:///${caller.project}/table/${d.table}`] },
    })
  })

  it('answers 404 for an unknown row of a table, and 400 for another edge on a table ref', async () => {
    // Prepare
    const d = await dataset(caller, 'ds2', [{ q: 1 }])

    // Act
    const [unknownRow, byIndex] = await Promise.all([
      read(caller, [`${d.ref}/attr/rows/id/nope`]),
      read(caller, [`${d.ref}/attr/rows/index/0`]),
    ])

    // Assess
    expect(unknownRow).toEqual({ status: 404, body: { reason: 'Row digest nope not found' } })
    expect(byIndex).toEqual({ status: 400, body: { reason: 'Table refs must have id extra' } })
  })

  it('answers 400 for an id edge on a value that is no table ref', async () => {
    // Act
    const res = await read(caller, [objRef(caller.project, 'doc', doc, '/key/tags/id/x')])

    // Assess
    expect(res).toEqual({ status: 400, body: { reason: 'Unknown ref type: id' } })
  })

  it('answers 404 naming the digests of versions that do not exist, by content digest only', async () => {
    // Prepare
    const missing = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

    // Act
    const [unknownDigest, unknownObject, byIndex, mixed] = await Promise.all([
      read(caller, [objRef(caller.project, 'doc', missing)]),
      read(caller, [objRef(caller.project, 'nobody', doc)]),
      read(caller, [objRef(caller.project, 'doc', 'v0')]),
      read(caller, [objRef(caller.project, 'doc', doc), objRef(caller.project, 'text', missing)]),
    ])

    // Assess
    expect(unknownDigest).toEqual({
      status: 404,
      body: { reason: `Ref read contains 1 digests, but found 0 objects. Diff digests: {'${missing}'}` },
    })
    expect(unknownObject.status).toBe(404)
    expect(byIndex).toEqual({
      status: 404,
      body: { reason: "Ref read contains 1 digests, but found 0 objects. Diff digests: {'v0'}" },
    })
    expect(mixed).toEqual({
      status: 404,
      body: { reason: `Ref read contains 2 digests, but found 1 objects. Diff digests: {'${missing}'}` },
    })
  })

  it('answers 400 for latest, as Weave does', async () => {
    // Act
    const res = await read(caller, [objRef(caller.project, 'doc', 'latest', '/key/title')])

    // Assess
    expect(res).toEqual({ status: 400, body: { reason: 'Reading refs with `latest` is not supported' } })
  })

  it('answers null for a deleted version, with or without a path, beside live ones', async () => {
    // Prepare
    const c = await newProjectCaller()
    const gone = await publish(c, 'gone', { a: 1 })
    const kept = await publish(c, 'kept', { a: 2 })
    await send(deleteApp, '/obj/delete', { project_id: c.project, object_id: 'gone', digests: [gone] }, c)

    // Act
    const res = await read(c, [
      objRef(c.project, 'gone', gone),
      objRef(c.project, 'gone', gone, '/key/a'),
      objRef(c.project, 'kept', kept),
    ])

    // Assess
    expect(res).toEqual({ status: 200, body: { vals: [null, null, { a: 2 }] } })
  })

  it('answers null for a ref met on the way into another project, even one of the caller’s own entity', async () => {
    // Prepare
    const other: ProjectCaller = { ...caller, project: `${caller.entity}/other` }
    const there = await publish(other, 'there', { secret: 'OTHER-PROJECT' })
    const here = await publish(caller, 'here', { link: objRef(other.project, 'there', there) })

    // Act
    const res = await read(caller, [objRef(caller.project, 'here', here, '/key/link/key/secret')])

    // Assess
    expect(res).toEqual({ status: 200, body: { vals: [null] } })
  })

  it('answers 400 for refs Weave does not parse, with its messages', async () => {
    // Prepare
    const p = caller.project
    const cases: [string, string][] = [
      ['not-a-ref', 'Invalid URI: not-a-ref. Must start with weave:///'],
      [
        `weave-trace-internal:///${p}/object/doc:${doc}`,
        `Invalid URI: weave-trace-internal:///${p}/object/doc:${doc}. Must start with weave:///`,
      ],
      [`weave:///${caller.entity}`, `Invalid URI: weave:///${caller.entity}`],
      [`weave:///${p}/thing/x:y`, 'Unknown ref kind: thing'],
      [`weave:///${p}/object`, `Invalid URI: weave:///${p}/object. Nothing follows the ref kind 'object'`],
      [`weave:///${p}/object/doc`, `Invalid URI: weave:///${p}/object/doc. Expected <name>:<version> after 'object/'`],
      [`weave:///${p}/object/doc:${doc}/key`, 'Extra fields must be key-value pairs.'],
      [`weave:///${p}/object/doc:${doc}/field/x`, "Invalid extra edge name at index 0: ['field', 'x']"],
      [
        `weave:///${p}/object/doc:${doc}/key/a/index/one`,
        "Invalid list edge value at index 3: ['key', 'a', 'index', 'one']",
      ],
      [`weave:///${p}/table/abc`, 'Table refs not supported'],
      [`weave:///${p}/table/abc/id/def`, 'Table refs not supported'],
      [
        `weave:///${p}/call/0193f1c2-8a4b-7d3e-9f10-2b3c4d5e6f70`,
        'Call refs not supported in batch read, use calls_query_stream',
      ],
    ]

    // Act
    const results = await Promise.all(cases.map(([ref]) => read(caller, [objRef(p, 'doc', doc), ref])))

    // Assess
    expect(results).toEqual(cases.map(([, reason]) => ({ status: 400, body: { reason } })))
  })

  it('answers 400 Too many refs beyond 1,000, and 422 for a body without a list of strings', async () => {
    // Act
    const [tooMany, missing, notStrings] = await Promise.all([
      read(
        caller,
        Array.from({ length: 1001 }, () => objRef(caller.project, 'doc', doc)),
      ),
      send(app, '/refs/read_batch', {}, caller),
      read(caller, [1, null]),
    ])

    // Assess
    expect(tooMany).toEqual({ status: 400, body: { reason: 'Too many refs' } })
    expect(missing.status).toBe(422)
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'refs'], type: 'missing' })
    expect(notStrings.status).toBe(422)
  })
})

describe('POST /refs/read_batch across tenants', () => {
  it("answers 403 without data for another entity's refs, and null for one met on the way", async () => {
    // Prepare
    const owner = await newProjectCaller()
    const stranger = await newProjectCaller()
    const secret = await publish(owner, 'secret', { token: 'SECRET-VALUE' })
    const foreign = objRef(owner.project, 'secret', secret)
    const own = await publish(stranger, 'mine', { v: 1, link: foreign })

    // Act
    const [alone, mixed, withPath] = await Promise.all([
      read(stranger, [foreign]),
      read(stranger, [objRef(stranger.project, 'mine', own), foreign]),
      read(stranger, [`${foreign}/key/token`]),
    ])
    const throughOwn = await read(stranger, [objRef(stranger.project, 'mine', own, '/key/link/key/token')])
    const asOwner = await read(owner, [foreign])

    // Assess
    expect(throughOwn).toEqual({ status: 200, body: { vals: [null] } })
    for (const res of [alone, mixed, withPath]) {
      expect(res).toEqual({ status: 403, body: { reason: `You do not have access to entity '${owner.entity}'` } })
    }
    expect(asOwner).toEqual({ status: 200, body: { vals: [{ token: 'SECRET-VALUE' }] } })
  })

  it("answers 400 for a project name W&B refuses, after the entity's check", async () => {
    // Prepare
    const c = await newProjectCaller()

    // Act
    const res = await read(c, [`weave:///${c.entity}/p#x/object/o:d`])

    // Assess
    expect(res).toEqual({
      status: 400,
      body: { reason: `Invalid project '${c.entity}/p#x': a project name cannot contain characters: '#'` },
    })
  })

  it("serves the caller's principal from the REST authorizer through the Lambda handler, and refuses others", async () => {
    // Prepare
    const owner = await newProjectCaller()
    const stranger = await newCaller()
    const digest = await publish(owner, 'o', { v: 'lambda' })
    const invoke = (who: typeof stranger) =>
      invokeLambda(
        handler,
        restEvent({
          method: 'POST',
          path: '/refs/read_batch',
          headers: { 'content-type': 'application/json', ...who.basic },
          body: JSON.stringify({ refs: [objRef(owner.project, 'o', digest)] }),
          authorizer: authorizerFor(who),
        }),
      )

    // Act
    const [mine, theirs] = [await invoke(owner), await invoke(stranger)]

    // Assess
    expect(mine.statusCode).toBe(200)
    expect(JSON.parse(mine.body)).toEqual({ vals: [{ v: 'lambda' }] })
    expect(theirs.statusCode).toBe(403)
    expect(theirs.body).not.toContain('lambda')
  })
})

describe('POST /refs/read_batch with many refs', () => {
  it('resolves 1,000 refs in one request, reading each version once, in batched reads', async () => {
    // Prepare
    const c = await newProjectCaller()
    const digests: string[] = []
    for (let i = 0; i < 60; i += 20) {
      digests.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => publish(c, `o${i + j}`, { i: i + j })))))
    }
    const rows = Array.from({ length: 40 }, (_, i) => ({ row: i }))
    const d = await dataset(c, 'many', rows)
    const refs: string[] = []
    const expected: unknown[] = []
    for (let k = 0; k < 1000; k++) {
      if (k % 7 === 0) {
        refs.push(`${d.ref}/attr/rows/id/${d.rowDigests[k % 40]}/key/row`)
        expected.push(k % 40)
      } else {
        refs.push(objRef(c.project, `o${k % 60}`, digests[k % 60] as string, k % 2 === 0 ? '/key/i' : ''))
        expected.push(k % 2 === 0 ? k % 60 : { i: k % 60 })
      }
    }
    let objectKeys = 0
    let objectBatches = 0
    const watch = watchDynamoInFlight((command) => {
      const items = (command.input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>
      const keys = Object.values(items).flatMap((r) => r.Keys ?? [])
      const objects = keys.filter((k) => JSON.stringify(k).includes('"OBJ#')).length
      if (command.name !== 'BatchGetItemCommand' || objects === 0) return false
      objectKeys += objects
      objectBatches++
      return true
    })

    // Act
    let res: Res
    try {
      res = await read(c, refs)
    } finally {
      watch.stop()
    }

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.vals).toEqual(expected)
    // 60 objects and the dataset, each read once, in BatchGetItems of up to 100 keys (61 GetItems before).
    expect(objectKeys).toBe(61)
    expect(objectBatches).toBeLessThanOrEqual(2)
    expect(watch.max()).toBeLessThanOrEqual(4)
  })
})

describe('POST /refs/read_batch under generated refs', () => {
  it('never answers 5xx, and answers 4xx as {reason} or {detail}', async () => {
    // Prepare
    const c = await newProjectCaller()
    const digest = await publish(c, 'g', { a: [1, { b: 'x' }], s: 'str' })
    const part = fc.oneof(
      fc.constantFrom(
        'key',
        'attr',
        'index',
        'id',
        'a',
        'b',
        's',
        '0',
        '-1',
        '1_0',
        '',
        '%',
        '%2F',
        '%ZZ',
        'latest',
        ':',
      ),
      fc.string({ maxLength: 6 }),
    )
    const tail = fc.array(part, { maxLength: 6 }).map((parts) => parts.join('/'))
    const ref = fc.oneof(
      tail.map((t) => `weave:///${c.project}/object/g:${digest}/${t}`),
      tail.map((t) => `weave:///${c.project}/${t}`),
      tail.map((t) => `weave:///${t}`),
      fc.string({ maxLength: 30 }),
    )
    const failures: string[] = []

    // Act
    await fc.assert(
      fc.asyncProperty(fc.array(ref, { minLength: 1, maxLength: 4 }), async (refs) => {
        const res = await read(c, refs)
        const shaped = typeof res.body?.reason === 'string' || Array.isArray(res.body?.detail)
        if (res.status >= 500 || (res.status >= 400 && !shaped))
          failures.push(`${res.status} ← ${JSON.stringify(refs)}`)
      }),
      { numRuns: 150 },
    )

    // Assess
    expect(failures).toEqual([])
  })
})
