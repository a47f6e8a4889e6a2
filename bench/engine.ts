/**
 * Reference engine throughput: completion tokens per second for one stream and for 16 concurrent streams, free text
 * and under a JSON-schema constraint, through the `ChatBackend` streaming path in-process, and over HTTP/SSE through
 * the engine's OpenAI-compatible server. Run with `npm run bench:engine`.
 */
import { cpus } from 'node:os'
import { startReferenceServer } from '#shared/engine/openai-server'
import { createReferenceBackend } from '#shared/engine/reference-backend'
import { referenceCatalogModel } from '#shared/engine/settings'
import { Cancellation } from '#shared/inference/cancellation'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'

const backend = createReferenceBackend()
const model = referenceCatalogModel({
  id: 'loom/bench',
  backend: { kind: 'reference', settings: { maxConcurrency: 16 } },
})
const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 40 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    city: { type: 'string', maxLength: 40 },
    tags: { type: 'array', items: { type: 'string', maxLength: 16 }, maxItems: 4 },
    bio: { type: 'string', maxLength: 120 },
  },
  required: ['name', 'age', 'city', 'tags', 'bio'],
  additionalProperties: false,
}

type Result = { tokens: number; ttftMs: number }
type Runner = (request: ChatCompletionRequest, index: number) => Promise<Result>

const server = await startReferenceServer({ models: [model] })

// Over HTTP: the SSE body is read as it arrives; usage comes from the final usage chunk.
async function overHttp(request: ChatCompletionRequest): Promise<Result> {
  const started = performance.now()
  const res = await fetch(`${server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...request, model: model.id, stream: true, stream_options: { include_usage: true } }),
  })
  let ttft = 0
  let text = ''
  for await (const part of res.body as AsyncIterable<Uint8Array>) {
    if (ttft === 0) ttft = performance.now() - started
    text += Buffer.from(part).toString('utf8')
  }
  const usage = /"completion_tokens":(\d+)/g
  let tokens = 0
  for (const m of text.matchAll(usage)) tokens = Number(m[1])
  return { tokens, ttftMs: ttft }
}

async function inProcess(request: ChatCompletionRequest, index: number): Promise<Result> {
  const started = performance.now()
  let ttft = 0
  let tokens = 0
  const call = { request, model, requestId: `bench-${index}`, created: 0, signal: new Cancellation() }
  for await (const chunk of backend.stream(call)) {
    if (ttft === 0 && chunk.choices[0]?.delta.content) ttft = performance.now() - started
    if (chunk.choices.length === 0) tokens = chunk.usage?.completion_tokens ?? 0
  }
  return { tokens, ttftMs: ttft }
}

async function scenario(
  name: string,
  request: ChatCompletionRequest,
  concurrency: number,
  rounds: number,
  one: Runner = inProcess,
) {
  await one(request, -1)
  const started = performance.now()
  const results: Result[] = []
  for (let r = 0; r < rounds; r++) {
    results.push(
      ...(await Promise.all(Array.from({ length: concurrency }, (_, i) => one({ ...request, seed: r * 100 + i }, i)))),
    )
  }
  const seconds = (performance.now() - started) / 1000
  const tokens = results.reduce((s, x) => s + x.tokens, 0)
  const ttft = results.map((x) => x.ttftMs).sort((a, b) => a - b)
  return {
    scenario: name,
    concurrency,
    requests: results.length,
    tokens,
    'tokens/s': Math.round(tokens / seconds),
    'per-stream tokens/s': Math.round(tokens / seconds / concurrency),
    'p50 TTFT ms': Number((ttft[Math.floor(ttft.length / 2)] ?? 0).toFixed(1)),
  }
}

const free: ChatCompletionRequest = {
  messages: [{ role: 'user', content: 'Tell me a short story about a weaver.' }],
  max_completion_tokens: 256,
  ignore_eos: true,
}
const json: ChatCompletionRequest = {
  messages: [{ role: 'user', content: 'Describe a person in JSON.' }],
  max_completion_tokens: 256,
  response_format: { type: 'json_schema', json_schema: { name: 'person', schema: SCHEMA } },
}

const rows = [
  await scenario('free text', free, 1, 16),
  await scenario('free text', free, 16, 4),
  await scenario('json schema', json, 1, 16),
  await scenario('json schema', json, 16, 4),
  await scenario('free text, HTTP/SSE', free, 1, 16, overHttp),
  await scenario('free text, HTTP/SSE', free, 16, 4, overHttp),
  await scenario('json schema, HTTP/SSE', json, 1, 16, overHttp),
  await scenario('json schema, HTTP/SSE', json, 16, 4, overHttp),
]
await server.close()
console.log(`Reference engine, Node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} (${cpus().length} cores)`)
console.table(rows)
