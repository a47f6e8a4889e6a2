/**
 * `npm run bench:training`: trajectories/s for a realistic log request of just under the 5 MiB body limit, end to end
 * through the log function's app (auth, JSON parse, validation, metrics, gzip + chunking, DynamoDB writes), with the
 * phases timed apart and the storage's raw ceiling (the same items written straight through BatchWriteItem) measured
 * in the same run. Storage is an in-process dynalite, so absolute figures are for this machine only.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import dynalite from 'dynalite'
import { createApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { putAll } from '#shared/db/batch-write'
import { ensureTable } from '#shared/db/ensure-table'
import { registerModel } from '#shared/training/preview-models'

const ITERATIONS = Number(process.argv[2] ?? 5)

// Deterministic pseudo-random text, so each run measures the same bytes.
let seed = 42
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}
const WORDS =
  'the agent reads file returns error value table query result step plan check test path user order count index cache token model reward tool call search answer because therefore'.split(
    ' ',
  )
const text = (words: number) => Array.from({ length: words }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ')

const SYSTEM = `You are a software agent. ${text(220)}`
const TOOLS = ['search_code', 'read_file', 'run_tests'].map((name) => ({
  type: 'function',
  function: { name, description: text(25), parameters: { type: 'object', properties: { q: { type: 'string' } } } },
}))

// One ART-style rollout: system + task, three tool-calling turns (trainable Choices), tool results, a final answer.
function rollout(): Record<string, unknown> {
  const items: unknown[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: text(80) },
  ]
  for (let turn = 0; turn < 3; turn++) {
    const id = `call_${Math.floor(rand() * 1e9)}`
    items.push({
      finish_reason: 'tool_calls',
      index: 0,
      logprobs: null,
      message: {
        role: 'assistant',
        content: text(40),
        tool_calls: [
          { id, type: 'function', function: { name: 'search_code', arguments: JSON.stringify({ q: text(6) }) } },
        ],
      },
    })
    items.push({ role: 'tool', tool_call_id: id, content: text(150) })
  }
  items.push({ finish_reason: 'stop', index: 0, logprobs: null, message: { role: 'assistant', content: text(60) } })
  const reward = Math.round(rand() * 100) / 100
  return {
    messages_and_choices: items,
    tools: TOOLS,
    additional_histories: [],
    reward,
    initial_policy_version: null,
    final_policy_version: null,
    metrics: { duration: rand() * 30, correct: reward > 0.5, turns: 3 },
    metadata: { task_id: `t-${Math.floor(rand() * 1e6)}`, difficulty: 'medium' },
    logs: [],
  }
}

function buildBody(maxBytes: number): { text: string; trajectories: number; groups: number } {
  const groups: { trajectories: unknown[]; exceptions: unknown[]; metadata: object; metrics: object; logs: [] }[] = []
  const body = { model_id: '', split: 'train', trajectory_groups: groups }
  let size = Buffer.byteLength(JSON.stringify(body))
  for (;;) {
    const group = {
      trajectories: Array.from({ length: 8 }, rollout),
      exceptions: [],
      metadata: { scenario: text(3) },
      metrics: { judge_score: rand() },
      logs: [] as [],
    }
    const added = Buffer.byteLength(JSON.stringify(group)) + 1
    if (size + added > maxBytes) break
    groups.push(group)
    size += added
  }
  return { text: JSON.stringify(body), trajectories: groups.length * 8, groups: groups.length }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const ms = (start: number) => performance.now() - start

async function main() {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  config.dynamoEndpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  config.tableName = 'loom-bench-training'
  await ensureTable(config.tableName)
  const { app } = await import('#functions/training/log-trajectories/handler')
  const { GROUPS_KEY, parseLogInput } = await import('#shared/training/log-input')
  const { parseJsonWithElements } = await import('#shared/http/read-json')
  const { computeLogMetrics } = await import('#shared/training/metrics')
  const { encodeGroup } = await import('#shared/training/group-codec')

  const { key, record } = await createApiKey({ userId: 'bench-user', entity: 'bench' })
  const principal = { userId: 'bench-user', keyId: record.keyId, entity: 'bench', entities: ['bench'] }
  const { model } = await registerModel(principal, {
    entity: 'bench',
    project: 'rl',
    name: 'agent',
    base_model: 'Qwen',
  })
  const body = buildBody(config.maxBodyBytes)
  const bytes = Buffer.byteLength(body.text)

  const phases = { parseValidateMetrics: [] as number[], metrics: [] as number[], encode: [] as number[] }
  const endToEnd: number[] = []
  const rawCeiling: number[] = []
  const rawUncompressed: number[] = []
  let storedBytes = 0
  let items = 0
  for (let i = 0; i < ITERATIONS + 1; i++) {
    let start = performance.now()
    const input = parseLogInput(model.id, parseJsonWithElements(body.text, GROUPS_KEY))
    const tParse = ms(start)
    start = performance.now()
    computeLogMetrics(input.request.split, input.request.trajectory_groups)
    const tMetrics = ms(start)
    start = performance.now()
    const encoded = input.groupTexts.map((g) => encodeGroup(g))
    const tEncode = ms(start)
    storedBytes = encoded.flat().reduce((n, c) => n + c.length, 0)
    items = encoded.flat().length

    start = performance.now()
    const res = await app.request(`/v1/preview/models/${model.id}/log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body.text,
    })
    const tEnd = ms(start)
    if (res.status !== 200) throw new Error(`log failed: ${res.status} ${await res.text()}`)

    // Raw ceiling: the same chunk items, written straight to the table with the same batching.
    start = performance.now()
    await putAll(
      encoded.flatMap((chunks, g) => chunks.map((data, c) => ({ PK: `BENCH#${i}#${g}`, SK: `C#${c}`, data }))),
    )
    const tRaw = ms(start)
    // Without compression: each group's JSON bytes, chunked the same way.
    const plain = input.groupTexts.map((g) => Buffer.from(g))
    start = performance.now()
    await putAll(plain.map((data, g) => ({ PK: `BENCHRAW#${i}#${g}`, SK: 'C#0', data })))
    const tRawPlain = ms(start)
    if (i === 0) continue // warm-up
    phases.parseValidateMetrics.push(tParse)
    phases.metrics.push(tMetrics)
    phases.encode.push(tEncode)
    endToEnd.push(tEnd)
    rawCeiling.push(tRaw)
    rawUncompressed.push(tRawPlain)
  }
  const perSecond = (msValue: number) => Math.round((body.trajectories / msValue) * 1000)
  const result = {
    requestBytes: bytes,
    trajectories: body.trajectories,
    groups: body.groups,
    storedItems: items,
    storedBytes,
    compressionRatio: Number((bytes / storedBytes).toFixed(2)),
    iterations: ITERATIONS,
    medianMs: {
      endToEnd: Number(median(endToEnd).toFixed(1)),
      parseValidateMetrics: Number(median(phases.parseValidateMetrics).toFixed(1)),
      metrics: Number(median(phases.metrics).toFixed(2)),
      encode: Number(median(phases.encode).toFixed(1)),
      rawStorageCompressed: Number(median(rawCeiling).toFixed(1)),
      rawStorageUncompressed: Number(median(rawUncompressed).toFixed(1)),
    },
    trajectoriesPerSecond: {
      endToEnd: perSecond(median(endToEnd)),
      rawStorageCeiling: perSecond(median(rawCeiling)),
      rawStorageUncompressed: perSecond(median(rawUncompressed)),
    },
    node: process.version,
  }
  console.log(JSON.stringify(result, null, 2))
  mkdirSync('bench-results', { recursive: true })
  writeFileSync('bench-results/training.json', `${JSON.stringify(result, null, 2)}\n`)
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

await main()
