import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-feedback/handler'
import { app as purgeApp } from '#functions/tracing/purge-feedback/handler'
import { app } from '#functions/tracing/query-feedback/handler'
import { app as replaceApp } from '#functions/tracing/replace-feedback/handler'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

async function seed(c: ProjectCaller) {
  const rows = [
    {
      id: 'f1',
      weave_ref: `weave:///${c.project}/call/a`,
      feedback_type: 'wandb.note.1',
      payload: { note: 'hello world' },
    },
    { id: 'f2', weave_ref: `weave:///${c.project}/call/a`, feedback_type: 'score', payload: { v: 3 } },
    { id: 'f3', weave_ref: `weave:///${c.project}/call/b`, feedback_type: 'score', payload: { v: 10 } },
  ]
  for (const row of rows) await send(createApp, '/feedback/create', { project_id: c.project, ...row }, c)
}

const ids = (res: { body: { result: { id: string }[] } }) => res.body.result.map((r) => r.id)

describe('POST /feedback/query', () => {
  it('filters with the query language and counts all matches', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seed(caller)
    const q = (query: unknown, extra: Record<string, unknown> = {}) =>
      send(app, '/feedback/query', { project_id: caller.project, query, ...extra }, caller)

    // Act
    const byRef = await q({
      $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: `weave:///${caller.project}/call/a` }] },
    })
    const byType = await q({ $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: 'score' }] } })
    const numeric = await q({ $expr: { $gt: [{ $getField: 'payload.v' }, { $literal: 5 }] } })
    const contains = await q({
      $expr: {
        $contains: { input: { $getField: 'payload.note' }, substr: { $literal: 'WORLD' }, case_insensitive: true },
      },
    })
    const byId = await q({ $expr: { $eq: [{ $getField: 'id' }, { $literal: 'f2' }] } })
    const paged = await q(
      { $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: 'score' }] } },
      { limit: 1, offset: 1 },
    )

    // Assess
    expect(ids(byRef)).toEqual(['f1', 'f2'])
    expect(ids(byType)).toEqual(['f2', 'f3'])
    expect(ids(numeric)).toEqual(['f3'])
    expect(ids(contains)).toEqual(['f1'])
    expect(ids(byId)).toEqual(['f2'])
    expect(paged.body).toMatchObject({ total_count: 2 })
    expect(ids(paged)).toEqual(['f3'])
  })

  it('takes the same query language as calls: $in, $not, nested $and/$or, $convert and created_at datetimes', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seed(caller)
    const q = (expr: unknown) =>
      send(app, '/feedback/query', { project_id: caller.project, query: { $expr: expr } }, caller)
    const type = { $getField: 'feedback_type' }
    const v = { $getField: 'payload.v' }

    // Act
    const inList = await q({ $in: [{ $getField: 'id' }, [{ $literal: 'f1' }, { $literal: 'f3' }]] })
    const negated = await q({ $not: [{ $eq: [type, { $literal: 'score' }] }] })
    const nested = await q({
      $and: [
        { $eq: [type, { $literal: 'score' }] },
        { $or: [{ $lt: [v, { $literal: 4 }] }, { $gte: [v, { $literal: 100 }] }] },
      ],
    })
    const converted = await q({ $gt: [{ $convert: { input: v, to: 'double' } }, { $literal: 9.5 }] })
    const since = await q({ $gt: [{ $getField: 'created_at' }, { $literal: '2000-01-01T00:00:00Z' }] })
    const future = await q({ $gt: [{ $getField: 'created_at' }, { $literal: '2999-01-01T00:00:00Z' }] })

    // Assess
    expect(ids(inList)).toEqual(['f1', 'f3'])
    expect(ids(negated)).toEqual(['f1'])
    expect(ids(nested)).toEqual(['f2'])
    expect(ids(converted)).toEqual(['f3'])
    expect(ids(since)).toEqual(['f1', 'f2', 'f3'])
    expect(ids(future)).toEqual([])
  })

  it('sorts and selects fields, payload paths included', async () => {
    const caller = await newProjectCaller()
    await seed(caller)
    const res = await send(
      app,
      '/feedback/query',
      { project_id: caller.project, fields: ['id', 'payload.v'], sort_by: [{ field: 'id', direction: 'desc' }] },
      caller,
    )
    expect(res.body).toEqual({
      result: [
        { id: 'f3', 'payload.v': '10' },
        { id: 'f2', 'payload.v': '3' },
        { id: 'f1', 'payload.v': '' },
      ],
      total_count: 3,
    })
  })

  it("selects a payload path as the reference's toString(JSON_VALUE) text, whatever the value's type", async () => {
    // Prepare
    const caller = await newProjectCaller()
    const payload = {
      n: 10,
      f: 1.5,
      tiny: 0.0001,
      s: 'héllo',
      b: true,
      z: null,
      obj: { a: 1, s: 'x"y' },
      arr: [1, 'two', null],
    }
    const row = { project_id: caller.project, id: 'p1', weave_ref: `weave:///${caller.project}/call/a`, payload }
    await send(createApp, '/feedback/create', { ...row, feedback_type: 'score' }, caller)
    const paths = ['n', 'f', 'tiny', 's', 'b', 'z', 'obj', 'arr', 'arr.1', 'obj.a.deeper', 'missing']

    // Act
    const res = await send(
      app,
      '/feedback/query',
      { project_id: caller.project, fields: [...paths.map((p) => `payload.${p}`), 'payload'] },
      caller,
    )

    // Assess: orm.py selects toString(JSON_VALUE(payload_dump, path)) and the server sets
    // function_json_value_return_type_allow_complex, so objects and arrays come back as minified JSON text.
    expect(res.body.result).toEqual([
      {
        'payload.n': '10',
        'payload.f': '1.5',
        'payload.tiny': '1e-04',
        'payload.s': 'héllo',
        'payload.b': 'true',
        'payload.z': 'null',
        'payload.obj': '{"a":1,"s":"x\\"y"}',
        'payload.arr': '[1,"two",null]',
        'payload.arr.1': 'two',
        'payload.obj.a.deeper': '',
        'payload.missing': '',
        payload,
      },
    ])
  })

  it('compares a bare payload or payload_dump with the stored JSON text, as json.dumps wrote it', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const payloads: Record<string, Record<string, unknown>> = { a: { note: 'héllo', score: 1 }, b: { score: 10 } }
    for (const [id, payload] of Object.entries(payloads)) {
      const row = { project_id: caller.project, id, weave_ref: `weave:///${caller.project}/call/a`, payload }
      await send(createApp, '/feedback/create', { ...row, feedback_type: 'score' }, caller)
    }
    const q = async (expr: unknown) =>
      ids(await send(app, '/feedback/query', { project_id: caller.project, query: { $expr: expr } }, caller))
    const payload = { $getField: 'payload' }

    // Act
    const whole = await q({ $eq: [payload, { $literal: '{"note": "h\\u00e9llo", "score": 1}' }] })
    const dump = await q({ $eq: [{ $getField: 'payload_dump' }, { $literal: '{"score": 10}' }] })
    const contains = await q({ $contains: { input: payload, substr: { $literal: '"score": 1' } } })
    const empty = await q({ $eq: [payload, { $literal: '' }] })

    // Assess
    expect(whole).toEqual(['a'])
    expect(dump).toEqual(['b'])
    expect(contains).toEqual(['a', 'b'])
    expect(empty).toEqual([])
  })

  it('takes a table-qualified feedback.<column> in fields, query and sort_by as the column', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seed(caller)
    const q = (body: Record<string, unknown>) =>
      send(app, '/feedback/query', { project_id: caller.project, ...body }, caller)
    const eq = (field: string, value: string) => ({ $expr: { $eq: [{ $getField: field }, { $literal: value }] } })

    // Act
    const res = await q({
      fields: ['feedback.id', 'feedback.payload_dump', 'feedback.scorer_tags'],
      query: eq('feedback.feedback_type', 'score'),
      sort_by: [{ field: 'feedback.id', direction: 'desc' }],
    })
    const byId = await q({ fields: ['id'], query: eq('feedback.id', 'f2') })
    const since = await q({
      query: { $expr: { $gt: [{ $getField: 'feedback.created_at' }, { $literal: '2000-01-01T00:00:00Z' }] } },
    })
    const payload = await q({ fields: ['feedback.payload'] })
    const payloadPath = await q({ query: eq('feedback.payload.v', '3') })
    const unknown = await q({ sort_by: [{ field: 'feedback.bogus', direction: 'asc' }] })

    // Assess: orm.py pops the "table prefix" and checks the rest against the stored column names (`payload_dump`,
    // not `payload`); `tuples_to_rows` names the result as asked, less a trailing `_dump`, and leaves it unparsed.
    expect(res.body).toEqual({
      result: [
        { 'feedback.id': 'f3', 'feedback.payload': '{"v": 10}', 'feedback.scorer_tags': [] },
        { 'feedback.id': 'f2', 'feedback.payload': '{"v": 3}', 'feedback.scorer_tags': [] },
      ],
      total_count: 2,
    })
    expect(byId.body.result).toEqual([{ id: 'f2' }])
    expect(ids(since)).toEqual(['f1', 'f2', 'f3'])
    expect(payload).toEqual({ status: 400, body: { reason: 'Unknown field: feedback.payload' } })
    expect(payloadPath).toEqual({ status: 400, body: { reason: 'Unknown field: feedback.payload.v' } })
    expect(unknown).toEqual({ status: 400, body: { reason: 'Unknown field: feedback.bogus' } })
  })

  it('sorts payload paths by presence, then as numbers, then as byte-ordered strings, in either direction', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const payloads: Record<string, Record<string, unknown>> = {
      alpha: { label: 'alpha', score: 10 },
      zeta: { label: 'Zeta' },
      beta: { label: 'beta', score: 2 },
      high: { label: 'high', score: 'high' },
      blank: { score: null },
    }
    for (const [id, payload] of Object.entries(payloads)) {
      const row = { project_id: caller.project, id, weave_ref: `weave:///${caller.project}/call/a`, payload }
      await send(createApp, '/feedback/create', { ...row, feedback_type: 'score' }, caller)
    }
    const order = async (field: string, direction: string) =>
      ids(await send(app, '/feedback/query', { project_id: caller.project, sort_by: [{ field, direction }] }, caller))

    // Act
    const scoreAsc = await order('payload.score', 'asc')
    const scoreDesc = await order('payload.score', 'desc')
    const labelAsc = await order('payload.label', 'asc')
    const labelDesc = await order('payload.label', 'desc')

    // Assess: orm.py sorts a JSON path by JSON_EXISTS DESC (an explicit null exists and reads as ''), then
    // toFloat64OrNull and the string in the requested direction, NULLs last.
    expect(scoreAsc).toEqual(['beta', 'alpha', 'blank', 'high', 'zeta'])
    expect(scoreDesc).toEqual(['alpha', 'beta', 'high', 'blank', 'zeta'])
    expect(labelAsc).toEqual(['zeta', 'alpha', 'beta', 'high', 'blank'])
    expect(labelDesc).toEqual(['high', 'beta', 'alpha', 'zeta', 'blank'])
  })

  it('sorts columns by value with nulls last in either direction', async () => {
    // Prepare
    const caller = await newProjectCaller()
    for (const [id, creator] of [
      ['f1', 'bob'],
      ['f2', null],
      ['f3', 'Ann'],
    ] as const) {
      const row = { project_id: caller.project, id, weave_ref: `weave:///${caller.project}/call/a`, creator }
      await send(createApp, '/feedback/create', { ...row, feedback_type: 'score', payload: {} }, caller)
    }
    const order = async (direction: string) =>
      ids(
        await send(
          app,
          '/feedback/query',
          { project_id: caller.project, sort_by: [{ field: 'creator', direction }] },
          caller,
        ),
      )

    // Act
    const asc = await order('asc')
    const desc = await order('desc')

    // Assess
    expect(asc).toEqual(['f3', 'f1', 'f2'])
    expect(desc).toEqual(['f1', 'f3', 'f2'])
  })

  it('answers 400 Unknown field for a field outside the feedback table, before reading anything', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q = (body: Record<string, unknown>) =>
      send(app, '/feedback/query', { project_id: caller.project, ...body }, caller)
    const eq = (field: string) => ({ $expr: { $eq: [{ $getField: field }, { $literal: 'x' }] } })

    // Act
    const inQuery = await q({ query: eq('bogus') })
    const inFields = await q({ fields: ['id', 'bogus'] })
    const inSort = await q({ sort_by: [{ field: 'bogus', direction: 'asc' }] })
    const underColumn = await q({ query: eq('feedback_type.x') })
    const countInQuery = await q({ query: eq('count(*)') })
    const fieldsFirst = await q({ fields: ['first'], query: eq('second') })

    // Assess
    expect(inQuery).toEqual({ status: 400, body: { reason: 'Unknown field: bogus' } })
    expect(inFields).toEqual({ status: 400, body: { reason: 'Unknown field: bogus' } })
    expect(inSort).toEqual({ status: 400, body: { reason: 'Unknown field: bogus' } })
    expect(underColumn).toEqual({ status: 400, body: { reason: 'Unknown field: feedback_type.x' } })
    expect(countInQuery).toEqual({ status: 400, body: { reason: 'Unknown field: count(*)' } })
    expect(fieldsFirst.body).toEqual({ reason: 'Unknown field: first' })
  })

  it('takes every column, payload paths, map keys, payload_dump and count(*)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seed(caller)
    const q = (body: Record<string, unknown>) =>
      send(app, '/feedback/query', { project_id: caller.project, ...body }, caller)
    const columns = [
      'id',
      'project_id',
      'weave_ref',
      'wb_user_id',
      'creator',
      'created_at',
      'feedback_type',
      'payload',
      'annotation_ref',
      'runnable_ref',
      'call_ref',
      'trigger_ref',
      'queue_id',
      'scorer_tags',
      'scorer_tag_reasons',
      'scorer_tag_confidences',
      'scorer_ratings',
      'scorer_rating_reasons',
      'scorer_rating_confidences',
      'span_agent_name',
      'span_agent_version',
      'span_status_code',
      'span_conversation_id',
      'span_trace_id',
      'scorer_trace_id',
    ]

    // Act
    const all = await q({ fields: columns, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'f2' }] } } })
    const paths = await q({
      fields: ['payload_dump', 'scorer_ratings.a.b'],
      sort_by: [{ field: 'scorer_rating_reasons.why', direction: 'asc' }],
      query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'f3' }] } },
    })
    const counted = await q({
      fields: ['count(*)'],
      query: { $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: 'score' }] } },
    })

    // Assess
    expect(all.status).toBe(200)
    expect(Object.keys(all.body.result[0])).toEqual(columns)
    expect(paths.body.result).toEqual([{ payload: { v: 10 }, 'scorer_ratings.a.b': null }])
    expect(counted.body.result).toEqual([{ 'count(*)': 2 }])
  })

  it('answers 422 for a malformed query and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const bad = await send(
      app,
      '/feedback/query',
      { project_id: a.project, query: { $expr: { $eq: [{ $literal: 1 }] } } },
      a,
    )
    const unknownOp = await send(app, '/feedback/query', { project_id: a.project, query: { $expr: { $nope: [] } } }, a)
    const foreign = await send(app, '/feedback/query', { project_id: b.project }, a)
    expect(bad.status).toBe(422)
    expect(unknownOp.status).toBe(422)
    expect(foreign.status).toBe(403)
  })
})

describe('POST /feedback/purge', () => {
  it('deletes the rows named by id, alone or in an $or', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seed(caller)
    const eq = (id: string) => ({ $eq: [{ $getField: 'id' }, { $literal: id }] })

    // Act
    const one = await send(
      purgeApp,
      '/feedback/purge',
      { project_id: caller.project, query: { $expr: eq('f1') } },
      caller,
    )
    const many = await send(
      purgeApp,
      '/feedback/purge',
      { project_id: caller.project, query: { $expr: { $or: [eq('f2'), eq('nope')] } } },
      caller,
    )
    const left = await send(app, '/feedback/query', { project_id: caller.project }, caller)

    // Assess
    expect(one).toEqual({ status: 200, body: {} })
    expect(many).toEqual({ status: 200, body: {} })
    expect(ids(left)).toEqual(['f3'])
  })

  it('answers 400 for any other query and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const query = { $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: 'score' }] } }
    const bad = await send(purgeApp, '/feedback/purge', { project_id: a.project, query }, a)
    const foreign = await send(purgeApp, '/feedback/purge', { project_id: b.project, query }, a)
    expect(bad).toEqual({
      status: 400,
      body: { reason: 'Can only purge feedback by specifying one or more feedback ids' },
    })
    expect(foreign.status).toBe(403)
  })
})

describe('POST /feedback/replace', () => {
  it('removes the old row and creates the new one under a new id', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seed(caller)

    // Act
    const res = await send(
      replaceApp,
      '/feedback/replace',
      {
        project_id: caller.project,
        feedback_id: 'f2',
        weave_ref: `weave:///${caller.project}/call/a`,
        feedback_type: 'score',
        payload: { v: 4 },
      },
      caller,
    )
    const left = await send(app, '/feedback/query', { project_id: caller.project }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ wb_user_id: caller.userId, payload: { v: 4 } })
    expect(res.body.id).not.toBe('f2')
    expect(ids(left)).toEqual(['f1', 'f3', res.body.id])
  })

  it('keeps the old row when the new one is invalid', async () => {
    const caller = await newProjectCaller()
    await seed(caller)
    const res = await send(
      replaceApp,
      '/feedback/replace',
      {
        project_id: caller.project,
        feedback_id: 'f1',
        weave_ref: 'x',
        feedback_type: 'wandb.note.1',
        payload: { note: '' },
      },
      caller,
    )
    const left = await send(app, '/feedback/query', { project_id: caller.project }, caller)
    expect(res.status).toBe(400)
    expect(ids(left)).toEqual(['f1', 'f2', 'f3'])
  })

  it('answers 422 without feedback_id', async () => {
    const caller = await newProjectCaller()
    const res = await send(
      replaceApp,
      '/feedback/replace',
      { project_id: caller.project, weave_ref: 'x', feedback_type: 't', payload: {} },
      caller,
    )
    expect(res.status).toBe(422)
  })
})
