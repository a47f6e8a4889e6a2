import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as createFeedbackApp } from '#functions/tracing/create-feedback/handler'
import { app as createTableApp } from '#functions/tracing/create-table/handler'
import { app as deleteObjApp } from '#functions/tracing/delete-obj/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app } from '#functions/tracing/stream-query-calls/handler'
import { endPart, startPart, writeCalls } from '../../support/calls.js'
import { publish, publishText, sendText } from '../../support/objects.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

let caller: ProjectCaller
let project: string
let promptRef: string
let hotRef: string
let coldRef: string
const newId = (): string => randomUUID()
const ids = { hot: newId(), cold: newId(), plain: newId(), gone: newId(), foreign: newId() }
const PROMPT = { _type: 'StringPrompt', content: 'Say {x}' }
let hotVal: Record<string, unknown>
let coldVal: Record<string, unknown>
let goneRef: string
const foreignRef = 'weave:///someone-else/proj/object/model:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

async function query(body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const res = await app.request('/calls/stream_query', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...caller.basic },
    body: JSON.stringify({ project_id: project, ...body }),
  })
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

const names = () =>
  new Map([
    [ids.hot, 'hot'],
    [ids.cold, 'cold'],
    [ids.plain, 'plain'],
    [ids.gone, 'gone'],
    [ids.foreign, 'foreign'],
  ])
const idsOf = (calls: Record<string, unknown>[]) => calls.map((c) => names().get(c.id as string) ?? '?')
const temperature = { $getField: 'inputs.model.temperature' }

beforeAll(async () => {
  caller = await newProjectCaller()
  project = caller.project
  const promptDigest = await publish(caller, 'prompt', PROMPT)
  promptRef = `weave:///${project}/object/prompt:${promptDigest}`
  hotVal = { _type: 'Model', name: 'hot', temperature: 0.9, prompt: promptRef }
  coldVal = { _type: 'Model', name: 'cold', temperature: 0.1, prompt: promptRef }
  hotRef = `weave:///${project}/object/hot:${await publish(caller, 'hot', hotVal)}`
  coldRef = `weave:///${project}/object/cold:${await publish(caller, 'cold', coldVal)}`
  const goneDigest = await publish(caller, 'gone', { _type: 'Model', temperature: 0.5 })
  goneRef = `weave:///${project}/object/gone:${goneDigest}`
  const del = await send(deleteObjApp, '/obj/delete', { project_id: project, object_id: 'gone' }, caller)
  if (del.status !== 200) throw new Error(`obj/delete failed: ${del.status}`)
  const call = (id: string, started: string, inputs: Record<string, unknown>) => ({
    start: startPart(project, { id, started_at: started, inputs }),
    end: endPart(project, id, { ended_at: started.replace(':00Z', ':01Z') }),
  })
  await writeCalls(caller, [
    call(ids.hot, '2025-01-01T00:00:00Z', { model: hotRef, x: 1 }),
    call(ids.cold, '2025-01-01T00:01:00Z', { model: coldRef, x: 2 }),
    call(ids.plain, '2025-01-01T00:02:00Z', { model: 'not a ref', x: 3 }),
    call(ids.gone, '2025-01-01T00:03:00Z', { model: goneRef, x: 4 }),
    call(ids.foreign, '2025-01-01T00:04:00Z', { model: foreignRef, x: 5 }),
  ])
})

describe('POST /calls/stream_query expand_columns', () => {
  it('replaces an object ref by the object value with its ref under _ref', async () => {
    // Act
    const calls = await query({ filter: { call_ids: [ids.hot] }, expand_columns: ['inputs.model'] })

    // Assess
    expect(calls.map((c) => c.inputs)).toEqual([
      { model: { _type: 'Model', name: 'hot', temperature: 0.9, prompt: promptRef, _ref: hotRef }, x: 1 },
    ])
  })

  it('expands a ref inside an expanded object when its deeper path is listed', async () => {
    // Act
    const calls = await query({
      filter: { call_ids: [ids.hot, ids.cold] },
      expand_columns: ['inputs.model.prompt', 'inputs.model'],
    })

    // Assess
    const prompt = { ...PROMPT, _ref: promptRef }
    expect(calls.map((c) => c.inputs)).toEqual([
      { model: { _type: 'Model', name: 'hot', temperature: 0.9, prompt, _ref: hotRef }, x: 1 },
      { model: { _type: 'Model', name: 'cold', temperature: 0.1, prompt, _ref: coldRef }, x: 2 },
    ])
  })

  it('leaves non-refs, deleted objects and refs into other projects as they are', async () => {
    // Act
    const calls = await query({
      filter: { call_ids: [ids.plain, ids.gone, ids.foreign] },
      expand_columns: ['inputs.model', 'inputs.x', 'output.missing'],
    })

    // Assess
    expect(calls.map((c) => c.inputs)).toEqual([
      { model: 'not a ref', x: 3 },
      { model: goneRef, x: 4 },
      { model: foreignRef, x: 5 },
    ])
  })

  it('follows the extra path of a ref into the object value', async () => {
    // Prepare
    const id = randomUUID()
    const ref = `${hotRef}/attr/temperature`
    await writeCalls(caller, [
      {
        start: startPart(project, { id, started_at: '2025-01-02T00:00:00Z', inputs: { t: ref, p: `${hotRef}/key/x` } }),
      },
    ])

    // Act
    const calls = await query({ filter: { call_ids: [id] }, expand_columns: ['inputs.t', 'inputs.p'] })

    // Assess
    expect(calls.map((c) => c.inputs)).toEqual([{ t: 0.9, p: `${hotRef}/key/x` }])
  })

  it('expands an op ref as Weave does (an op ref is an object ref), and leaves a call ref as it is', async () => {
    // Prepare: an op as the weave SDKs publish it, passed as a call's input (an evaluation's `model` op).
    const op = {
      _type: 'CustomWeaveType',
      weave_type: { type: 'Op' },
      files: { 'obj.py': 'AAAA' },
      load_op: 'NO_LOAD_OP',
    }
    const opRef = `weave:///${project}/op/my_model:${await publish(caller, 'my_model', op)}`
    const callRef = `weave:///${project}/call/${ids.hot}`
    const id = randomUUID()
    await writeCalls(caller, [
      {
        start: startPart(project, {
          id,
          started_at: '2025-01-02T00:00:00Z',
          inputs: { model: opRef, parent: callRef },
        }),
      },
    ])

    // Act
    const calls = await query({ filter: { call_ids: [id] }, expand_columns: ['inputs.model', 'inputs.parent'] })

    // Assess
    expect(calls.map((c) => c.inputs)).toEqual([{ model: { ...op, _ref: opRef }, parent: callRef }])
  })

  it('expands dataset-row refs through the dataset object and bare table-row refs into the rows', async () => {
    // Prepare
    const table = await send(
      createTableApp,
      '/table/create',
      { table: { project_id: project, rows: [{ q: 'one' }, { q: 'two' }] } },
      caller,
    )
    const tableRef = `weave:///${project}/table/${table.body.digest}`
    const datasetRef = `weave:///${project}/object/ds:${await publish(caller, 'ds', { _type: 'Dataset', rows: tableRef })}`
    const [first, second] = table.body.row_digests as string[]
    const viaDataset = `${datasetRef}/attr/rows/id/${second}`
    const direct = `${tableRef}/id/${first}`
    const id = randomUUID()
    const inputs = { a: viaDataset, b: direct, c: tableRef, d: `${tableRef}/id/unknown` }
    await writeCalls(caller, [{ start: startPart(project, { id, started_at: '2025-01-03T00:00:00Z', inputs }) }])

    // Act
    const calls = await query({
      filter: { call_ids: [id] },
      expand_columns: ['inputs.a', 'inputs.b', 'inputs.c', 'inputs.d'],
    })

    // Assess
    expect(calls.map((c) => c.inputs)).toEqual([
      { a: { q: 'two', _ref: viaDataset }, b: { q: 'one', _ref: direct }, c: tableRef, d: `${tableRef}/id/unknown` },
    ])
  })

  it('filters and sorts through expanded refs without returning the values when asked', async () => {
    // Act
    const warm = await query({
      query: { $expr: { $gt: [temperature, { $literal: 0.05 }] } },
      sort_by: [{ field: 'inputs.model.temperature', direction: 'desc' }],
      expand_columns: ['inputs.model'],
      return_expanded_column_values: false,
    })
    const first = await query({
      query: { $expr: { $gt: [temperature, { $literal: 0.05 }] } },
      expand_columns: ['inputs.model'],
      limit: 1,
    })
    const unexpanded = await query({ query: { $expr: { $gt: [temperature, { $literal: 0.05 }] } } })

    // Assess
    expect(idsOf(warm)).toEqual(['hot', 'cold'])
    expect(warm.map((c) => (c.inputs as { model: unknown }).model)).toEqual([hotRef, coldRef])
    expect(first.map((c) => (c.inputs as { model: { _ref: string } }).model._ref)).toEqual([hotRef])
    expect(unexpanded).toEqual([])
  })

  it('sorts ascending on an expanded value, missing values last, then limits', async () => {
    // Act
    const calls = await query({
      filter: { call_ids: [ids.hot, ids.cold, ids.plain] },
      sort_by: [{ field: 'inputs.model.temperature', direction: 'asc' }],
      expand_columns: ['inputs.model'],
      columns: ['inputs'],
      limit: 2,
    })

    // Assess
    expect(idsOf(calls)).toEqual(['cold', 'hot'])
    expect(calls.map((c) => (c.inputs as { model: { name: string } }).model.name)).toEqual(['cold', 'hot'])
  })

  it('counts calls in calls/query_stats through an expanded ref', async () => {
    // Act
    const expanded = await send(
      statsApp,
      '/calls/query_stats',
      {
        project_id: project,
        query: { $expr: { $eq: [{ $getField: 'inputs.model.name' }, { $literal: 'cold' }] } },
        expand_columns: ['inputs.model'],
      },
      caller,
    )
    const plain = await send(
      statsApp,
      '/calls/query_stats',
      { project_id: project, query: { $expr: { $eq: [{ $getField: 'inputs.model.name' }, { $literal: 'cold' }] } } },
      caller,
    )

    // Assess
    expect(expanded).toEqual({ status: 200, body: { count: 1, has_more: false, total_storage_size_bytes: null } })
    expect(plain).toEqual({ status: 200, body: { count: 0, has_more: false, total_storage_size_bytes: null } })
  })

  it('answers expanded objects with their numbers as created, and filters on them as numbers', async () => {
    // Prepare: a project of its own, so the other tests' calls stay as they are.
    const other = await newProjectCaller()
    const exact = await publishText(other, 'm', '{"_type": "Model", "temperature": 1.0, "seed": 12345678901234567891}')
    const mRef = `weave:///${other.project}/object/m:${exact}`
    const coolRef = `weave:///${other.project}/object/cool:${await publish(other, 'cool', { temperature: 0.1 })}`
    const [warmId, coolId] = [newId(), newId()]
    await writeCalls(other, [
      {
        start: startPart(other.project, { id: warmId, inputs: { model: mRef, seed: `${mRef}/key/seed` } }),
        end: endPart(other.project, warmId),
      },
      {
        start: startPart(other.project, { id: coolId, inputs: { model: coolRef } }),
        end: endPart(other.project, coolId),
      },
    ])

    // Act
    const lines = await sendText(
      app,
      '/calls/stream_query',
      {
        project_id: other.project,
        query: { $expr: { $gt: [temperature, { $literal: 0.5 }] } },
        expand_columns: ['inputs.model', 'inputs.seed'],
      },
      other,
    )

    // Assess: a ref to a number inside the object is replaced by the number itself.
    const model = `"model":{"_type":"Model","temperature":1.0,"seed":12345678901234567891,"_ref":"${mRef}"}`
    const line = expect.stringContaining(`"inputs":{${model},"seed":12345678901234567891}`)
    expect(lines.text.split('\n').filter((l) => l !== '')).toEqual([line])
  })
})

describe('POST /calls/stream_query include_feedback', () => {
  it('attaches each call its own feedback rows under summary.weave.feedback, oldest first', async () => {
    // Prepare
    const weaveRef = `weave:///${project}/call/${ids.hot}`
    const note = await send(
      createFeedbackApp,
      '/feedback/create',
      { project_id: project, weave_ref: weaveRef, feedback_type: 'wandb.note.1', payload: { note: 'looks hot' } },
      caller,
    )
    const score = await send(
      createFeedbackApp,
      '/feedback/create',
      { project_id: project, weave_ref: weaveRef, feedback_type: 'score', payload: { value: 3 }, creator: 'ann' },
      caller,
    )
    const other = await send(
      createFeedbackApp,
      '/feedback/create',
      { project_id: project, weave_ref: `${hotRef}`, feedback_type: 'score', payload: { value: 1 } },
      caller,
    )

    // Act
    const calls = await query({ filter: { call_ids: [ids.hot, ids.cold] }, include_feedback: true })
    const without = await query({ filter: { call_ids: [ids.hot] } })

    // Assess
    expect([note.status, score.status, other.status]).toEqual([200, 200, 200])
    expect(calls.map((c) => (c.summary as { weave: { feedback: unknown } }).weave.feedback)).toEqual([
      [
        {
          id: note.body.id,
          feedback_type: 'wandb.note.1',
          weave_ref: weaveRef,
          payload: { note: 'looks hot' },
          creator: null,
          created_at: note.body.created_at,
          wb_user_id: caller.userId,
        },
        {
          id: score.body.id,
          feedback_type: 'score',
          weave_ref: weaveRef,
          payload: { value: 3 },
          creator: 'ann',
          created_at: score.body.created_at,
          wb_user_id: caller.userId,
        },
      ],
      [],
    ])
    expect(without.map((c) => (c.summary as { weave: Record<string, unknown> }).weave.feedback)).toEqual([undefined])
  })

  it('returns the feedback under summary.weave when the columns leave summary out', async () => {
    // Prepare
    const weaveRef = `weave:///${project}/call/${ids.cold}`
    const body = { project_id: project, weave_ref: weaveRef, feedback_type: 'score', payload: { value: 2 } }
    const created = await send(createFeedbackApp, '/feedback/create', body, caller)

    // Act
    const calls = await query({ columns: ['id'], filter: { call_ids: [ids.cold] }, include_feedback: true })
    const plain = await query({ columns: ['id'], filter: { call_ids: [ids.cold] } })

    // Assess: the reference creates `summary.weave` for the feedback (`hydrate_calls_with_feedback`).
    const feedback = calls.map((c) => (c.summary as { weave?: { feedback?: { id: string }[] } } | undefined)?.weave)
    expect(created.status).toBe(200)
    expect(feedback.map((w) => w?.feedback?.map((f) => f.id))).toEqual([[created.body.id]])
    expect(plain.map((c) => c.summary)).toEqual([null])
  })
})
