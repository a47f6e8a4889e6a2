/**
 * `npm run bench:load [-- --duration 60 --workers 24]`: a mixed workload against the real local stack (`npm start`
 * with in-memory DynamoDB, spawned as its own process) over loopback HTTP: tracing ingest, feedback, objects, queries,
 * chat completions on `loom/reference-1` through the `openai` SDK (buffered and streamed) and training logs, from a
 * fixed number of concurrent workers. Afterwards every acknowledged write is read back through the public read
 * endpoints (and checked for duplicates). Prints per-operation figures; exits 1 on any error, lost or doubled write.
 */
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import OpenAI from 'openai'
import { startLocalStack } from '../test/support/local-stack.js'
import { type Acked, verifyWrites } from './support/load-verify.js'

const { values: args } = parseArgs({
  options: { duration: { type: 'string' }, workers: { type: 'string' } },
  allowPositionals: true,
})
const DURATION_S = Number(args.duration ?? process.env.LOAD_DURATION_S ?? 60)
const WORKERS = Number(args.workers ?? process.env.LOAD_WORKERS ?? 24)
const ENTITY = 'load'
const KEY = `load-${randomUUID()}`
const PROJECT = `${ENTITY}/tracing-${randomUUID().slice(0, 8)}`
const INFERENCE_PROJECT = `${ENTITY}/inference-${randomUUID().slice(0, 8)}`
const MODEL = 'loom/reference-1'

type OpStats = { latencies: number[]; errors: number; samples: string[] }
const stats = new Map<string, OpStats>()
const acked: Acked = {
  calls: [],
  feedback: [],
  objects: [],
  logs: [],
  usage: { requests: 0, prompt: 0, completion: 0 },
}

function stat(name: string): OpStats {
  let s = stats.get(name)
  if (s === undefined) {
    s = { latencies: [], errors: 0, samples: [] }
    stats.set(name, s)
  }
  return s
}

/** Times one operation; a throw or a non-2xx answer counts as an error (first few kept as samples). */
async function timed(name: string, fn: () => Promise<void>): Promise<void> {
  const s = stat(name)
  const t0 = performance.now()
  try {
    await fn()
    s.latencies.push(performance.now() - t0)
  } catch (error) {
    s.errors++
    if (s.samples.length < 5) s.samples.push(String(error instanceof Error ? error.message : error).slice(0, 300))
  }
}

const stack = await startLocalStack({ LOOM_MEMORY: '1', LOOM_BOOTSTRAP_KEY: KEY, LOOM_BOOTSTRAP_ENTITY: ENTITY })
const base = stack.url
const basic = { authorization: `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}` }
const bearer = { authorization: `Bearer ${KEY}` }
const openai = new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, project: INFERENCE_PROJECT, maxRetries: 0 })

/** POSTs JSON and returns the parsed answer; anything but 200 throws with the status and body. */
async function post(path: string, body: unknown, headers: Record<string, string> = basic): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`${path} ${res.status} ${text.slice(0, 200)}`)
  return path === '/calls/stream_query' ? text : JSON.parse(text)
}

function callParts(traceId: string, parentId: string | null, i: number) {
  const id = randomUUID()
  const startedAt = new Date()
  const start = {
    project_id: PROJECT,
    id,
    trace_id: traceId,
    parent_id: parentId,
    op_name: `weave:///${PROJECT}/op/step_${i % 5}:abc123`,
    started_at: startedAt.toISOString(),
    attributes: { weave: { client_version: '0.11.1', source: 'bench-load' } },
    inputs: { prompt: 'lorem ipsum '.repeat(20), i },
  }
  const end = {
    project_id: PROJECT,
    id,
    trace_id: traceId,
    ended_at: new Date(startedAt.getTime() + 120).toISOString(),
    output: { text: 'dolor sit amet '.repeat(10) },
    summary: { usage: { [MODEL]: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, requests: 1 } } },
  }
  return { id, start, end }
}

const prompts = ['Say hello to the load test.', 'Count to five.', 'Name a colour.', 'Write one short sentence.']
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T

// Each worker draws one operation per iteration with these weights: mostly ingest, then queries and completions.
const OPS: [name: string, weight: number, run: () => Promise<void>][] = [
  [
    'call/upsert_batch (10 calls)',
    6,
    async () => {
      const traceId = randomUUID()
      const root = callParts(traceId, null, 0)
      const calls = [root, ...Array.from({ length: 9 }, (_, i) => callParts(traceId, root.id, i + 1))]
      const batch = calls.flatMap((c) => [
        { mode: 'start', req: { start: c.start } },
        { mode: 'end', req: { end: c.end } },
      ])
      await post('/call/upsert_batch', { batch })
      acked.calls.push(...calls.map((c) => c.id))
    },
  ],
  [
    // A client retry racing its original (a timeout on a write that did land): both must succeed, nothing doubles.
    'call/upsert_batch sent twice',
    2,
    async () => {
      const traceId = randomUUID()
      const calls = Array.from({ length: 5 }, (_, i) => callParts(traceId, null, i))
      const batch = calls.flatMap((c) => [
        { mode: 'start', req: { start: c.start } },
        { mode: 'end', req: { end: c.end } },
      ])
      await Promise.all([post('/call/upsert_batch', { batch }), post('/call/upsert_batch', { batch })])
      acked.calls.push(...calls.map((c) => c.id))
    },
  ],
  [
    'call/start + call/end',
    4,
    async () => {
      const c = callParts(randomUUID(), null, 0)
      const started = (await post('/call/start', { start: c.start })) as { id: string }
      await post('/call/end', { end: { ...c.end, id: started.id } })
      acked.calls.push(started.id)
    },
  ],
  [
    'feedback/create',
    4,
    async () => {
      const weaveRef = `weave:///${PROJECT}/call/${pick(acked.calls) ?? randomUUID()}`
      const body = {
        project_id: PROJECT,
        weave_ref: weaveRef,
        feedback_type: 'score',
        payload: { score: Math.random() },
      }
      const res = (await post('/feedback/create', body)) as { id: string }
      acked.feedback.push(res.id)
    },
  ],
  [
    'feedback/create sent twice',
    1,
    async () => {
      const body = { project_id: PROJECT, weave_ref: `weave:///${PROJECT}/call/x`, feedback_type: 'note', payload: {} }
      const headers = { ...basic, 'x-weave-retry-id': randomUUID() }
      const [a, b] = (await Promise.all([
        post('/feedback/create', body, headers),
        post('/feedback/create', body, headers),
      ])) as { id: string }[]
      if (a?.id !== b?.id) throw new Error(`a retried create answered two ids: ${a?.id} and ${b?.id}`)
      acked.feedback.push((a as { id: string }).id)
    },
  ],
  [
    'obj/create',
    2,
    async () => {
      const objectId = `cfg-${Math.floor(Math.random() * 5)}`
      const val = { temperature: Math.random(), tags: ['load', randomUUID()] }
      const res = (await post('/obj/create', { obj: { project_id: PROJECT, object_id: objectId, val } })) as {
        digest: string
      }
      acked.objects.push({ objectId, digest: res.digest })
    },
  ],
  [
    'obj/read',
    2,
    async () => {
      const o = pick(acked.objects)
      if (o === undefined) return
      await post('/obj/read', { project_id: PROJECT, object_id: o.objectId, digest: o.digest })
    },
  ],
  ['calls/stream_query', 2, () => post('/calls/stream_query', { project_id: PROJECT, limit: 50 }).then(() => {})],
  ['calls/query_stats', 1, () => post('/calls/query_stats', { project_id: PROJECT }).then(() => {})],
  ['trace/usage', 1, () => post('/trace/usage', { project_id: PROJECT, limit: 200 }).then(() => {})],
  [
    'feedback/stats',
    1,
    async () => {
      const end = new Date()
      const start = new Date(end.getTime() - 3_600_000)
      const metrics = [{ json_path: 'score', value_type: 'numeric' }]
      await post('/feedback/stats', {
        project_id: PROJECT,
        start: start.toISOString(),
        end: end.toISOString(),
        metrics,
      })
    },
  ],
  [
    'chat (buffered)',
    2,
    async () => {
      const res = await openai.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: pick(prompts) }],
        max_tokens: 16,
      })
      if (res.usage === undefined) throw new Error('completion without usage')
      acked.usage.requests++
      acked.usage.prompt += res.usage.prompt_tokens
      acked.usage.completion += res.usage.completion_tokens
    },
  ],
  [
    'chat (streamed)',
    2,
    async () => {
      const stream = await openai.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: pick(prompts) }],
        max_tokens: 16,
        stream: true,
        stream_options: { include_usage: true },
      })
      let usage: { prompt_tokens: number; completion_tokens: number } | undefined
      for await (const chunk of stream) usage = chunk.usage ?? usage
      if (usage === undefined) throw new Error('stream without a usage chunk')
      acked.usage.requests++
      acked.usage.prompt += usage.prompt_tokens
      acked.usage.completion += usage.completion_tokens
    },
  ],
  [
    'training log',
    0.5,
    async () => {
      const trajectories = Array.from({ length: 4 }, () => ({
        messages_and_choices: [
          { role: 'user', content: 'What is 2 + 2?' },
          { finish_reason: 'stop', index: 0, logprobs: null, message: { role: 'assistant', content: '4' } },
        ],
        reward: Math.random(),
        metrics: {},
        metadata: {},
        logs: [],
        tools: null,
        additional_histories: [],
      }))
      const body = { split: 'train', trajectory_groups: [{ trajectories }] }
      const res = (await post(`/v1/preview/models/${trainingModel}/log`, body, bearer)) as { log_id: string }
      acked.logs.push(res.log_id)
    },
  ],
]
const TOTAL_WEIGHT = OPS.reduce((n, [, w]) => n + w, 0)

function drawOp(): (typeof OPS)[number] {
  let r = Math.random() * TOTAL_WEIGHT
  for (const op of OPS) {
    r -= op[1]
    if (r < 0) return op
  }
  return OPS[0] as (typeof OPS)[number]
}

const model = (await post(
  '/v1/preview/models',
  { entity: ENTITY, project: 'rl', name: `load-${randomUUID().slice(0, 8)}`, base_model: 'Qwen/Qwen2.5-7B-Instruct' },
  bearer,
)) as { id: string }
const trainingModel = model.id

process.stdout.write(`driving ${base} with ${WORKERS} workers for ${DURATION_S} s…\n`)
const runStart = Date.now()
const deadline = performance.now() + DURATION_S * 1000
const t0 = performance.now()
await Promise.all(
  Array.from({ length: WORKERS }, async () => {
    while (performance.now() < deadline) {
      const [name, , run] = drawOp()
      await timed(name, run)
    }
  }),
)
const elapsedS = (performance.now() - t0) / 1000

// The local server batches usage counters for `LOOM_USAGE_FLUSH_MS` (1 s) before writing them.
await new Promise((resolve) => setTimeout(resolve, 3_000))
const lost = await verifyWrites({ base, basic, bearer, project: PROJECT, inferenceProject: INFERENCE_PROJECT }, acked, {
  runStart,
  trainingModel,
})
await stack.stop()

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
const rows: string[] = []
let total = 0
let totalErrors = 0
const all: number[] = []
for (const [name] of OPS) {
  const s = stat(name)
  const n = s.latencies.length + s.errors
  total += n
  totalErrors += s.errors
  all.push(...s.latencies)
  rows.push(
    `| ${name} | ${fmt(n)} | ${fmt(n / elapsedS, 1)} | ${fmt(pct(s.latencies, 0.5), 1)} | ${fmt(pct(s.latencies, 0.99), 1)} | ${s.errors} |`,
  )
}
rows.push(
  `| **all** | ${fmt(total)} | ${fmt(total / elapsedS, 1)} | ${fmt(pct(all, 0.5), 1)} | ${fmt(pct(all, 0.99), 1)} | ${totalErrors} |`,
)
const lostTotal = Object.values(lost.lost).reduce((n, v) => n + v, 0)
const duplicatedTotal = Object.values(lost.duplicated).reduce((n, v) => n + v, 0)
process.stdout.write(
  [
    '',
    `${WORKERS} workers, ${fmt(elapsedS, 1)} s, Node ${process.version}`,
    '',
    '| operation | requests | rps | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    'Acknowledged writes read back:',
    ...Object.entries(lost.checked).map(([k, v]) => `- ${k}: ${fmt(v)} checked, ${lost.lost[k] ?? 0} lost`),
    ...Object.entries(lost.lost)
      .filter(([k]) => lost.checked[k] === undefined)
      .map(([k, v]) => `- ${k}: ${v} wrong`),
    ...Object.entries(lost.duplicated).map(([k, v]) => `- ${k}: ${v}`),
    ...lost.notes.map((n) => `- ${n}`),
    '',
    `errors: ${totalErrors}, lost writes: ${lostTotal}, duplicated writes: ${duplicatedTotal}`,
    ...[...stats].flatMap(([name, s]) => s.samples.map((m) => `  ${name}: ${m}`)),
    '',
  ].join('\n'),
)
process.exit(totalErrors > 0 || lostTotal > 0 || duplicatedTotal > 0 ? 1 : 0)
