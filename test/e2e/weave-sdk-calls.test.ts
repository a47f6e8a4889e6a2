import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { runWeaveScript, serveTracing, type TracingServer } from '../support/weave-sdk.js'

// The weave npm SDK keeps a global client and batch timers, so it runs in a child process (docs/tracing.md §16.4)
// against this process's functions served over loopback HTTP. The script traces nested ops, a failing op and an
// LLM-style op, publishes an object and a dataset, scores a call, waits for the SDK's batches and prints the ids it
// saw.
const SCRIPT = `
const weave = require(process.env.WEAVE_PATH)
const ids = {}
const here = () => weave.requireCurrentCallStackEntry()
;(async () => {
  const client = await weave.init(process.env.PROJECT)
  const llm = weave.op(async function llm(prompt) {
    ids.llm = here().callId
    return { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: 'echo ' + prompt } }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }
  }, { name: 'llm', summarize: (r) => ({ usage: { [r.model]: r.usage } }) })
  const inner = weave.op(async function inner(x) {
    ids.inner = here().callId
    return x * 2
  }, { name: 'inner' })
  const outer = weave.op(async function outer(x) {
    ids.outer = here().callId
    ids.trace = here().traceId
    const doubled = await inner(x)
    const reply = await llm('n=' + doubled)
    return { doubled, text: reply.choices[0].message.content }
  }, { name: 'outer' })
  const fails = weave.op(async function fails(reason) {
    ids.fails = here().callId
    throw new Error('boom: ' + reason)
  }, { name: 'fails' })
  const exact = weave.op(async function exact(output) {
    ids.scorer = here().callId
    return { correct: output.doubled === 42 }
  }, { name: 'exact' })

  const result = await outer(21)
  let thrown = ''
  try { await fails('no luck') } catch (e) { thrown = e.message }
  const score = await exact(result)
  const scorerRef = await client.publish(exact)
  const feedbackId = await client.addScore(ids.outer, ids.scorer, scorerRef.uri(), score)
  const objRef = await client.publish({ name: 'cfg', temperature: 0.25 }, 'settings')
  const dataset = new weave.Dataset({ id: 'grammar', rows: [{ q: 'a' }, { q: 'b' }] })
  const datasetRef = await dataset.save()
  const describe = weave.op(async function describe(ds) {
    ids.describe = here().callId
    return { rows: ds.length }
  }, { name: 'describe' })
  await describe(dataset)
  await client.waitForBatchProcessing()
  await client.updateCall(ids.inner, 'doubler')
  // The SDK has no query helpers for feedback or queues: the raw queries go through its own trace-server client, and
  // the queue (no SDK helper either) is created with that client's generic request.
  const api = client.traceServerApi
  const lines = async (resp) => (await resp.text()).split('\\n').filter((l) => l !== '').map((l) => JSON.parse(l).id)
  const scoreQuery = { $expr: { $eq: [{ $getField: 'feedback.[wandb.runnable.exact].payload.output.correct' }, { $literal: true }] } }
  const byScore = (await api.calls.callsQueryStatsCallsQueryStatsPost({ project_id: process.env.PROJECT, query: scoreQuery })).data
  const byScoreIds = await lines(await api.calls.callsQueryStreamCallsStreamQueryPost({ project_id: process.env.PROJECT, query: scoreQuery }))
  const json = (path, body) => api.request({ path, method: 'POST', body, type: 'application/json', format: 'json' })
  const queue = (await json('/annotation_queues', { project_id: process.env.PROJECT, name: 'review', scorer_refs: [] })).data.id
  await json('/annotation_queues/' + queue + '/items', { project_id: process.env.PROJECT, call_ids: [ids.outer, ids.fails], display_fields: [] })
  const queueQuery = { $expr: { $eq: [{ $getField: 'annotation_queue_items.queue_id' }, { $literal: queue }] } }
  const byQueue = (await api.calls.callsQueryStatsCallsQueryStatsPost({ project_id: process.env.PROJECT, query: queueQuery })).data
  const byQueueIds = await lines(await api.calls.callsQueryStreamCallsStreamQueryPost({ project_id: process.env.PROJECT, query: queueQuery }))
  const sdkCalls = (await client.getCalls({ trace_ids: [ids.trace] })).map((c) => ({ id: c.id, op: c.op_name, parent: c.parent_id }))
  const sdkFailed = await client.getCall(ids.fails)
  process.stdout.write(JSON.stringify({ ids, result, thrown, score, scorerRef: scorerRef.uri(), feedbackId,
    objRef: objRef.uri(), objDigest: objRef.digest, datasetRef: datasetRef.uri(), datasetDigest: datasetRef.digest,
    sdkCalls, sdkFailed: { id: sdkFailed.id, exception: sdkFailed.exception },
    byScore, byScoreIds, byQueue, byQueueIds }) + '\\n')
  process.exit(0)
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1) })
`

type SdkRun = {
  ids: { outer: string; inner: string; llm: string; fails: string; scorer: string; describe: string; trace: string }
  result: { doubled: number; text: string }
  thrown: string
  score: { correct: boolean }
  scorerRef: string
  feedbackId: string
  objRef: string
  objDigest: string
  datasetRef: string
  datasetDigest: string
  sdkCalls: { id: string; op: string; parent: string | null }[]
  sdkFailed: { id: string; exception: string }
  byScore: { count: number }
  byScoreIds: string[]
  byQueue: { count: number }
  byQueueIds: string[]
}

let app: Hono
let server: TracingServer
let caller: TestCaller
let project: string
let run: SdkRun

beforeAll(async () => {
  server = await serveTracing()
  app = server.app
  caller = await newCaller()
  project = `${caller.entity}/sdk-calls`
  run = await runWeaveScript<SdkRun>(SCRIPT, server, { PROJECT: project, WANDB_API_KEY: caller.key })
}, 90_000)

afterAll(async () => {
  await server.close()
})

async function post(path: string, body: Record<string, unknown>): Promise<Response> {
  return app.request(path, jsonInit({ project_id: project, ...body }, caller.basic))
}

async function streamQuery(body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const res = await post('/calls/stream_query', body)
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

const opRef = (name: string) => new RegExp(`^weave:///${project}/op/${name}:[A-Za-z0-9]{43}$`)

describe('weave npm SDK tracing calls against the call, object and feedback functions', () => {
  it('records nested ops under one trace with parent ids and op refs', async () => {
    // Act
    const calls = await streamQuery({ filter: { trace_ids: [run.ids.trace] } })

    // Assess
    const byId = new Map(calls.map((c) => [c.id, c]))
    expect(calls.map((c) => c.id)).toEqual([run.ids.outer, run.ids.inner, run.ids.llm])
    expect(byId.get(run.ids.outer)).toMatchObject({
      op_name: expect.stringMatching(opRef('outer')),
      trace_id: run.ids.trace,
      parent_id: null,
      inputs: { arg0: 21 },
      output: { doubled: 42, text: 'echo n=42' },
      exception: null,
      summary: { weave: { status: 'success', trace_name: 'outer' } },
    })
    expect(byId.get(run.ids.inner)).toMatchObject({
      op_name: expect.stringMatching(opRef('inner')),
      trace_id: run.ids.trace,
      parent_id: run.ids.outer,
      output: 42,
    })
    expect(byId.get(run.ids.llm)).toMatchObject({ parent_id: run.ids.outer, trace_id: run.ids.trace })
    expect(calls.every((c) => (c.attributes as { weave: { source: string } }).weave.source === 'js-sdk')).toBe(true)
  })

  it('records the exception of an op that threw', async () => {
    // Act
    const res = await post('/call/read', { id: run.ids.fails })

    // Assess
    expect(res.status).toBe(200)
    const { call } = (await res.json()) as { call: Record<string, unknown> }
    expect(run.thrown).toBe('boom: no luck')
    expect(call).toMatchObject({
      op_name: expect.stringMatching(opRef('fails')),
      parent_id: null,
      inputs: { arg0: 'no luck' },
      exception: 'boom: no luck',
      output: null,
      summary: { weave: { status: 'error', trace_name: 'fails' } },
    })
  })

  it('rolls LLM usage up from the LLM op into its parent summary and the trace usage', async () => {
    // Act
    const calls = await streamQuery({ filter: { call_ids: [run.ids.llm, run.ids.outer] } })
    const usageRes = await post('/trace/usage', { filter: { trace_ids: [run.ids.trace] } })

    // Assess
    const usage = { 'gpt-4o': { requests: 1, prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }
    for (const call of calls) expect((call.summary as { usage: unknown }).usage).toEqual(usage)
    expect(usageRes.status).toBe(200)
    const body = (await usageRes.json()) as { call_usage: Record<string, Record<string, Record<string, number>>> }
    expect(body.call_usage[run.ids.llm]?.['gpt-4o']).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 })
    // The SDK already merged the child's usage into the parent's summary and the server adds descendants again
    // (docs/tracing.md §14.2: reproduced as is), so the root counts the LLM call twice.
    expect(body.call_usage[run.ids.outer]?.['gpt-4o']).toMatchObject({ prompt_tokens: 22, completion_tokens: 14 })
  })

  it('counts the calls of the project and of the trace', async () => {
    // Act
    const all = await post('/calls/query_stats', {})
    const roots = await post('/calls/query_stats', { filter: { trace_roots_only: true } })
    const failed = await post('/calls/query_stats', {
      query: { $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'error' }] } },
    })

    // Assess
    expect(await all.json()).toMatchObject({ count: 6 })
    expect(await roots.json()).toMatchObject({ count: 4 })
    expect(await failed.json()).toMatchObject({ count: 1 })
  })

  it("filters calls by the SDK's score and by annotation queue membership through the SDK's trace-server client", () => {
    // Assess (the queries ran in the SDK's process, see SCRIPT)
    expect(run.byScore).toMatchObject({ count: 1 })
    expect(run.byScoreIds).toEqual([run.ids.outer])
    expect(run.byQueue).toMatchObject({ count: 2 })
    expect(run.byQueueIds).toEqual([run.ids.outer, run.ids.fails])
  })

  it('stores the published object and the dataset under the digests the SDK computed', async () => {
    // Act
    const obj = await post('/obj/read', { object_id: 'settings', digest: run.objDigest })
    const datasetId = /\/object\/([^:]+):/.exec(run.datasetRef)?.[1]
    const dataset = await post('/obj/read', { object_id: datasetId, digest: run.datasetDigest })

    // Assess
    expect(run.objRef).toBe(`weave:///${project}/object/settings:${run.objDigest}`)
    expect(obj.status).toBe(200)
    expect(await obj.json()).toMatchObject({
      obj: { object_id: 'settings', digest: run.objDigest, val: { name: 'cfg', temperature: 0.25 } },
    })
    expect(dataset.status).toBe(200)
    expect(await dataset.json()).toMatchObject({
      obj: {
        object_id: 'Dataset',
        digest: run.datasetDigest,
        base_object_class: 'Dataset',
        val: { _type: 'Dataset', rows: expect.stringMatching(`^weave:///${project}/table/`) },
      },
    })
  })

  it('stores the score as runnable feedback on the scored call', async () => {
    // Act
    const res = await post('/feedback/query', {
      query: {
        $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: `weave:///${project}/call/${run.ids.outer}` }] },
      },
    })

    // Assess
    expect(res.status).toBe(200)
    const body = (await res.json()) as { result: Record<string, unknown>[]; total_count: number }
    expect(body.total_count).toBe(1)
    expect(body.result[0]).toMatchObject({
      id: run.feedbackId,
      feedback_type: 'wandb.runnable.exact',
      payload: { output: { correct: true } },
      runnable_ref: run.scorerRef,
      call_ref: `weave:///${project}/call/${run.ids.scorer}`,
      wb_user_id: caller.userId,
    })
  })

  it('serves the SDK its own calls back through calls/stream_query', () => {
    // Assess
    expect(run.sdkCalls).toEqual([
      { id: run.ids.outer, op: expect.stringMatching(opRef('outer')), parent: null },
      { id: run.ids.inner, op: expect.stringMatching(opRef('inner')), parent: run.ids.outer },
      { id: run.ids.llm, op: expect.stringMatching(opRef('llm')), parent: run.ids.outer },
    ])
    expect(run.sdkFailed).toEqual({ id: run.ids.fails, exception: 'boom: no luck' })
  })

  it('records a dataset argument as its ref and finds the call by that input ref', async () => {
    // Act
    const calls = await streamQuery({ filter: { input_refs: [run.datasetRef] } })

    // Assess
    expect(calls.map((c) => c.id)).toEqual([run.ids.describe])
    expect(calls[0]).toMatchObject({ inputs: { arg0: run.datasetRef }, output: { rows: 2 } })
  })

  it('keeps the display name the SDK set after the call ended', async () => {
    // Act
    const res = await post('/call/read', { id: run.ids.inner })

    // Assess
    const { call } = (await res.json()) as { call: Record<string, unknown> }
    expect(call).toMatchObject({ display_name: 'doubler', summary: { weave: { display_name: 'doubler' } } })
  })

  it('returns the score with the call (include_feedback) and the dataset behind its input ref (expand_columns)', async () => {
    // Act
    const scored = await streamQuery({ filter: { call_ids: [run.ids.outer] }, include_feedback: true })
    const described = await streamQuery({ filter: { call_ids: [run.ids.describe] }, expand_columns: ['inputs.arg0'] })

    // Assess
    expect(scored.map((c) => (c.summary as { weave: { feedback: unknown } }).weave.feedback)).toEqual([
      [
        {
          id: run.feedbackId,
          feedback_type: 'wandb.runnable.exact',
          weave_ref: `weave:///${project}/call/${run.ids.outer}`,
          payload: { output: { correct: true } },
          creator: null,
          created_at: expect.any(String),
          wb_user_id: caller.userId,
        },
      ],
    ])
    expect(described.map((c) => (c.inputs as { arg0: unknown }).arg0)).toEqual([
      expect.objectContaining({
        _type: 'Dataset',
        _ref: run.datasetRef,
        rows: expect.stringMatching(`^weave:///${project}/table/`),
      }),
    ])
  })
})
