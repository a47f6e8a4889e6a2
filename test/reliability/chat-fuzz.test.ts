import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { clearCatalogCache } from '#shared/inference/catalog'
import { ANY_VALUE, DEEP } from '../support/arbitraries.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { nearValidChatBody } from '../support/chat-arbitraries.js'
import { addUpstreamModel } from '../support/models.js'
import { startVllmUpstream, type VllmUpstream } from '../support/vllm-upstream.js'

// Cases per target model: every field's plausible and implausible branches come up several times, and the suite
// stays within a few seconds per target on two shared cores (the reference engine generates on the same CPU).
// `LOOM_FUZZ_SCALE` multiplies it for a longer campaign (the suite's assertions are the same).
const RUNS = Math.round(300 * Number(process.env.LOOM_FUZZ_SCALE ?? 1))

/** A request the fuzzer sends: body text, content type, project and request-id headers (undefined for none). */
type Case = {
  body: string | undefined
  contentType: string | undefined
  stream: boolean
  project: string | undefined
  requestId: string | undefined
}

function cases(model: string): fc.Arbitrary<Case> {
  const json = (value: unknown) => JSON.stringify(value) ?? 'null'
  const sent = (b: Record<string, unknown>) => ({ text: json(b), stream: b.stream === true })
  const text = fc.oneof(
    { weight: 6, arbitrary: nearValidChatBody(model, 3, 0).map(sent) },
    { weight: 6, arbitrary: nearValidChatBody(model, 6, 1).map(sent) },
    { weight: 1, arbitrary: ANY_VALUE.map((v) => ({ text: json(v), stream: false })) },
    { weight: 1, arbitrary: DEEP.map((t) => ({ text: t, stream: false })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(nearValidChatBody(model, 6, 1), fc.nat())
        .map(([b, n]) => ({ text: json(b).slice(0, n % json(b).length), stream: b.stream === true })),
    },
    { weight: 1, arbitrary: fc.constant({ text: undefined, stream: false }) },
  )
  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
    {
      weight: 2,
      arbitrary: fc.constantFrom<string | undefined>(undefined, 'text/plain', 'application/x-www-form-urlencoded'),
    },
  )
  // Mostly none or the caller's own project; otherwise malformed, over-long or another entity's.
  const project = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(undefined, `${caller.entity}/fuzz`) },
    { weight: 1, arbitrary: fc.constantFrom('', 'a/b/c', '/', `${caller.entity}/`, 'ent-other/p', 'x'.repeat(3000)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  )
  const requestId = fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(8_000), ' ', 'req-1') },
  )
  return fc
    .record({ t: text, contentType, project, requestId })
    .map(({ t, contentType: ct, project: p, requestId: r }) => ({
      body: t.text,
      contentType: ct,
      stream: t.stream,
      project: p,
      requestId: r,
    }))
}

/** Why a response breaks the contract (undefined when it does not). */
function violation(status: number, contentType: string, text: string): string | undefined {
  if (status >= 500) return 'a 5xx'
  if (status >= 400) {
    let body: { error?: Record<string, unknown> } | undefined
    try {
      body = JSON.parse(text)
    } catch {
      return 'a 4xx that is not JSON'
    }
    const e = body?.error
    const shaped =
      typeof e?.message === 'string' &&
      typeof e.type === 'string' &&
      (e.param === null || typeof e.param === 'string') &&
      e.code === status &&
      Object.keys(body ?? {}).length === 1
    return shaped ? undefined : 'a 4xx without the inference error shape'
  }
  if (status !== 200) return `status ${status}`
  if (contentType.startsWith('text/event-stream')) return streamViolation(text)
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text)
  } catch {
    return 'a 200 that is not JSON'
  }
  const choices = body.choices as { index?: unknown; message?: { role?: unknown; content?: unknown } }[] | undefined
  const usage = body.usage as Record<string, unknown> | undefined
  if (body.object !== 'chat.completion' || !Array.isArray(choices) || choices.length === 0) return 'no choices'
  if (choices.some((c) => typeof c.index !== 'number' || typeof c.message?.role !== 'string')) return 'a bad choice'
  const { prompt_tokens: p, completion_tokens: n, total_tokens: t } = usage ?? {}
  if (typeof p !== 'number' || typeof n !== 'number' || t !== p + n) return 'bad usage'
  return undefined
}

function streamViolation(text: string): string | undefined {
  const events = text.split('\n\n').filter((e) => e !== '' && !e.startsWith(':'))
  if (events.at(-1) !== 'data: [DONE]') return 'a stream that does not end with data: [DONE]'
  for (const event of events.slice(0, -1)) {
    if (!event.startsWith('data: ')) return `an event without data: ${event.slice(0, 80)}`
    let chunk: Record<string, unknown>
    try {
      chunk = JSON.parse(event.slice(6))
    } catch {
      return `a chunk that is not JSON: ${event.slice(0, 80)}`
    }
    // A healthy upstream never fails mid-stream; an in-stream error here is a 5xx in disguise.
    if ('error' in chunk) return `an in-stream error: ${event.slice(0, 200)}`
    if (chunk.object !== 'chat.completion.chunk' || !Array.isArray(chunk.choices)) return 'a malformed chunk'
  }
  if (events.length < 2) return 'a stream without chunks'
  return undefined
}

let upstream: VllmUpstream
let caller: TestCaller
let upstreamModel: string
const counts: string[] = []

beforeAll(async () => {
  upstream = await startVllmUpstream()
  caller = await newCaller()
  upstreamModel = (await addUpstreamModel(upstream.baseUrl, [caller.entity])).id
  await putModel(referenceCatalogModel())
  clearCatalogCache()
})

afterAll(async () => {
  await upstream.close()
  process.stdout.write(`\nchat completion fuzz cases (runs=${RUNS}):\n${counts.join('\n')}\n`)
})

describe('POST /v1/chat/completions under fuzzed bodies', () => {
  it.each([
    ['a vLLM-protocol upstream', () => upstreamModel],
    ['the reference model', () => 'loom/reference-1'],
  ])('on %s never answers 5xx, answers 4xx in the error shape and 200 with a well-formed body', async (name, model) => {
    // Prepare
    const failures: string[] = []
    const byStatus = new Map<string, number>()

    // Act
    await fc.assert(
      fc.asyncProperty(cases(model()), async (c) => {
        const headers: Record<string, string> = { ...caller.bearer }
        if (c.contentType !== undefined) headers['content-type'] = c.contentType
        if (c.project !== undefined) headers['openai-project'] = c.project
        if (c.requestId !== undefined) headers['x-request-id'] = c.requestId
        const res = await app.request('/v1/chat/completions', {
          method: 'POST',
          headers,
          ...(c.body === undefined ? {} : { body: c.body }),
        })
        const text = await res.text()
        const kind = `${res.status}${res.status === 200 ? (c.stream ? ' stream' : ' buffered') : ''}`
        byStatus.set(kind, (byStatus.get(kind) ?? 0) + 1)
        const why = violation(res.status, res.headers.get('content-type') ?? '', text)
        if (why !== undefined) failures.push(`${why}: ${res.status} ${text.slice(0, 200)} ← ${c.body?.slice(0, 300)}`)
      }),
      { numRuns: RUNS },
    )
    const ran = [...byStatus.values()].reduce((n, v) => n + v, 0)
    const spread = [...byStatus].sort().map(([k, v]) => `${k}: ${v}`)
    counts.push(`  ${name}: ${ran} cases (${spread.join(', ')})`)

    // Assess
    expect(failures).toEqual([])
    expect(ran).toBe(RUNS)
    expect(byStatus.get('200 buffered') ?? 0).toBeGreaterThan(0)
    expect(byStatus.get('200 stream') ?? 0).toBeGreaterThan(0)
  })
})
