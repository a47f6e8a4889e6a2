import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { startVllmUpstream, type VllmUpstream } from '../support/vllm-upstream.js'
import { runWeaveScript, serveTracing, type TracingServer } from '../support/weave-sdk.js'

// The weave SDK's OpenAI integration against a real OpenAI-compatible upstream on loopback (one plain and one streamed
// completion inside an op), then an imperative evaluation of a dataset with a scorer.
const SCRIPT = `
const weave = require(process.env.WEAVE_PATH)
const { OpenAI } = require(process.env.OPENAI_PATH)
const here = () => weave.requireCurrentCallStackEntry()
;(async () => {
  const client = await weave.init(process.env.PROJECT)
  const openai = weave.wrapOpenAI(new OpenAI({ apiKey: 'sk-test', baseURL: process.env.UPSTREAM }))
  const ids = {}
  const chat = weave.op(async function chat(question) {
    ids.chat = here().callId
    ids.chatTrace = here().traceId
    const messages = [{ role: 'user', content: question }]
    const plain = await openai.chat.completions.create({ model: 'echo', messages })
    const stream = await openai.chat.completions.create({ model: 'echo', messages, stream: true, stream_options: { include_usage: true } })
    let streamed = ''
    for await (const chunk of stream) streamed += (chunk.choices[0] && chunk.choices[0].delta.content) || ''
    return { plain: plain.choices[0].message.content, streamed }
  }, { name: 'chat' })
  const answers = await chat('Hello big world')

  const dataset = new weave.Dataset({ id: 'qa', rows: [{ q: 'a b', expected: 'a b' }, { q: 'c', expected: 'x' }] })
  const model = weave.op(async function model({ datasetRow }) { return datasetRow.q }, { name: 'model' })
  const match = weave.op(async function match({ datasetRow, modelOutput }) {
    return { ok: datasetRow.expected === modelOutput }
  }, { name: 'match' })
  const evaluation = new weave.Evaluation({ id: 'qa-eval', dataset, scorers: [match] })
  const summary = await evaluation.evaluate({ model })

  const live = new weave.EvaluationLogger({ name: 'live-eval', dataset: 'qa-live', model: { name: 'live-model' } })
  const pred = live.logPrediction({ q: 'hi' }, 'hi')
  await pred.logScore('exact', true)
  await pred.finish()
  await live.logSummary()
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e221bc330000000049454e44ae426082', 'hex')
  const draw = weave.op(async function draw() { ids.draw = here().callId; return weave.weaveImage({ data: png, imageType: 'png' }) }, { name: 'draw' })
  await draw()
  await client.waitForBatchProcessing()
  const rootsWithCosts = (await client.getCalls({ trace_roots_only: true }, true)).length
  process.stdout.write(JSON.stringify({ ids, answers, summary, rootsWithCosts, png: png.toString('hex') }) + '\\n')
  process.exit(0)
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1) })
`

type Run = {
  ids: { chat: string; chatTrace: string; draw: string }
  rootsWithCosts: number
  png: string
  answers: { plain: string; streamed: string }
  summary: Record<string, unknown>
}

let app: Hono
let server: TracingServer
let upstream: VllmUpstream
let caller: TestCaller
let project: string
let run: Run

beforeAll(async () => {
  server = await serveTracing()
  app = server.app
  upstream = await startVllmUpstream({ modelName: 'echo' })
  caller = await newCaller()
  project = `${caller.entity}/sdk-eval`
  run = await runWeaveScript<Run>(SCRIPT, server, {
    PROJECT: project,
    WANDB_API_KEY: caller.key,
    UPSTREAM: upstream.baseUrl,
  })
}, 90_000)

afterAll(async () => {
  await server.close()
  await upstream.close()
})

async function streamQuery(body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const res = await app.request('/calls/stream_query', jsonInit({ project_id: project, ...body }, caller.basic))
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

const opName = (call: Record<string, unknown>) => /\/op\/([^:]+):/.exec(String(call.op_name))?.[1]

describe('weave npm SDK OpenAI integration and evaluations against the tracing functions', () => {
  it('records the OpenAI completions under the op with usage on each completion and merged into its parents', async () => {
    // Act
    const calls = await streamQuery({ filter: { trace_ids: [run.ids.chatTrace] } })

    // Assess
    expect(run.answers).toEqual({ plain: 'Hello big world', streamed: 'Hello big world' })
    const [root, ...rest] = calls
    expect(root).toMatchObject({ id: run.ids.chat, parent_id: null, output: run.answers })
    // weave 0.11's wrapper around openai 6 nests one create op inside another; every one lies under the chat op.
    const ids = new Set(calls.map((c) => c.id))
    expect(rest.every((c) => opName(c) === 'openai.chat.completions.create' && ids.has(c.parent_id))).toBe(true)
    const usage = (c: Record<string, unknown> | undefined): Record<string, number> =>
      ((c?.summary ?? {}) as { usage?: Record<string, Record<string, number>> }).usage?.echo ?? {}
    const leaves = rest.filter((c) => !calls.some((d) => d.parent_id === c.id))
    // Prompt: one token per word plus two per message (5); completion: the three echoed words; plain and streamed.
    expect(leaves.map((c) => usage(c))).toEqual([
      expect.objectContaining({ requests: 1, prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }),
      expect.objectContaining({ requests: 1, prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }),
    ])
    // The SDK sends the chat op (no usage of its own) its children's usage merged in; the stored summary keeps it.
    const children = rest.filter((c) => c.parent_id === run.ids.chat)
    expect(usage(root).requests).toBe(children.reduce((n, c) => n + (usage(c).requests ?? 0), 0))
    expect(usage(root).prompt_tokens).toBe(children.reduce((n, c) => n + (usage(c).prompt_tokens ?? 0), 0))
  })

  it('stores the evaluation as a trace of predict-and-score calls with the scorer results', async () => {
    // Act
    const evaluations = await streamQuery({
      filter: { trace_roots_only: true },
      query: { $expr: { $contains: { input: { $getField: 'op_name' }, substr: { $literal: 'Evaluation.evaluate' } } } },
    })
    const trace = await streamQuery({ filter: { trace_ids: [String(evaluations[0]?.trace_id)] } })

    // Assess
    expect(evaluations).toHaveLength(2)
    expect(evaluations[0]).toMatchObject({ output: run.summary, summary: { weave: { status: 'success' } } })
    const counts = new Map<string, number>()
    for (const c of trace) counts.set(String(opName(c)), (counts.get(String(opName(c))) ?? 0) + 1)
    expect(Object.fromEntries(counts)).toEqual({
      'Evaluation.evaluate': 1,
      'Evaluation.predictAndScore': 2,
      model: 2,
      match: 2,
    })
    expect(trace.filter((c) => opName(c) === 'match').map((c) => c.output)).toEqual(
      expect.arrayContaining([{ ok: true }, { ok: false }]),
    )
    expect(run.summary).toMatchObject({ match: { ok: { true_count: 1, true_fraction: 0.5 } } })
  })

  it('expands the dataset-row refs the evaluation passed to the model into the rows', async () => {
    // Act
    const calls = await streamQuery({
      query: { $expr: { $contains: { input: { $getField: 'op_name' }, substr: { $literal: '/op/model:' } } } },
      expand_columns: ['inputs.arg0.datasetRow'],
    })

    // Assess
    const rows = calls.map((c) => (c.inputs as { arg0: { datasetRow: Record<string, unknown> } }).arg0.datasetRow)
    expect(rows.map(({ _ref, ...row }) => row)).toEqual([
      { q: 'a b', expected: 'a b' },
      { q: 'c', expected: 'x' },
    ])
    expect(rows.every((r) => /\/object\/Dataset:[^/]+\/attr\/rows\/id\/[A-Za-z0-9]+$/.test(String(r._ref)))).toBe(true)
  })

  it('records an EvaluationLogger run with its score as runnable feedback on the prediction', async () => {
    // Act
    const evaluations = await streamQuery({
      filter: { trace_roots_only: true },
      query: { $expr: { $contains: { input: { $getField: 'op_name' }, substr: { $literal: 'Evaluation.evaluate' } } } },
    })
    const trace = await streamQuery({
      filter: { trace_ids: [String(evaluations[1]?.trace_id)] },
      include_feedback: true,
    })

    // Assess
    expect(evaluations[1]).toMatchObject({ output: { exact: { true_count: 1, true_fraction: 1 } } })
    const predict = trace.find((c) => opName(c) === 'Model.predict')
    expect(predict).toMatchObject({ inputs: { arg0: { q: 'hi' } }, output: 'hi' })
    const feedback = ((predict?.summary ?? {}) as { weave?: { feedback: unknown } }).weave?.feedback
    const scorer = trace.find((c) => opName(c) === 'exact.score')
    expect(feedback).toEqual([
      expect.objectContaining({
        feedback_type: 'wandb.runnable.exact',
        payload: { output: true },
        weave_ref: `weave:///${project}/call/${predict?.id}`,
      }),
    ])
    expect(scorer).toMatchObject({ output: true, parent_id: predict?.parent_id })
  })

  it('stores an image returned by an op as a file the call output points to', async () => {
    // Act
    const [draw] = await streamQuery({ filter: { call_ids: [run.ids.draw] } })
    const digest = ((draw?.output ?? {}) as { files?: Record<string, string> }).files?.['image.png']
    const file = await app.request('/file/content', jsonInit({ project_id: project, digest }, caller.basic))

    // Assess
    expect(draw?.output).toMatchObject({ _type: 'CustomWeaveType', weave_type: { type: 'PIL.Image.Image' } })
    expect(Buffer.from(await file.arrayBuffer()).toString('hex')).toBe(run.png)
    expect(run.rootsWithCosts).toBe(4)
  })
})
