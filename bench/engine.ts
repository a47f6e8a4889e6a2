/**
 * Reference engine throughput: completion tokens per second for one stream and for 16 concurrent streams, free text
 * and under a JSON-schema constraint, through the `ChatBackend` streaming path (in-process, no HTTP).
 * Run with `npm run bench:engine`.
 */
import { cpus } from 'node:os'
import { createReferenceBackend } from '#shared/engine/reference-backend'
import { referenceCatalogModel } from '#shared/engine/settings'
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

async function one(request: ChatCompletionRequest, index: number): Promise<Result> {
  const started = performance.now()
  let ttft = 0
  let tokens = 0
  const call = { request, model, requestId: `bench-${index}`, created: 0, signal: new AbortController().signal }
  for await (const chunk of backend.stream(call)) {
    if (ttft === 0 && chunk.choices[0]?.delta.content) ttft = performance.now() - started
    if (chunk.choices.length === 0) tokens = chunk.usage?.completion_tokens ?? 0
  }
  return { tokens, ttftMs: ttft }
}

async function scenario(name: string, request: ChatCompletionRequest, concurrency: number, rounds: number) {
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
  await scenario('free text', free, 1, 8),
  await scenario('free text', free, 16, 2),
  await scenario('json schema', json, 1, 8),
  await scenario('json schema', json, 16, 2),
]
console.log(`Reference engine, Node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} (${cpus().length} cores)`)
console.table(rows)
