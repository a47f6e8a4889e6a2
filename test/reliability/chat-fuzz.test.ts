import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { clearCatalogCache } from '#shared/inference/catalog'
import { ANY_VALUE, DEEP, HUGE_NUMBERS, ODD_STRINGS } from '../support/arbitraries.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { addUpstreamModel } from '../support/models.js'
import { startVllmUpstream, type VllmUpstream } from '../support/vllm-upstream.js'

// Cases per target model: every field's plausible and implausible branches come up several times, and the suite
// stays within a few seconds per target on two shared cores (the reference engine generates on the same CPU).
const RUNS = 300

/** A request the fuzzer sends: body text, content type, project and request-id headers (undefined for none). */
type Case = {
  body: string | undefined
  contentType: string | undefined
  stream: boolean
  project: string | undefined
  requestId: string | undefined
}

const smallInt = (min: number, max: number) => fc.integer({ min, max })
const plausibleNumber = fc.oneof(fc.double({ min: -2, max: 2, noNaN: true }), fc.integer({ min: -5, max: 5 }))
const implausible = fc.oneof(ANY_VALUE, HUGE_NUMBERS, fc.constantFrom(-1, 0, 1.5, '1', 'true', Number.NaN))

const contentPart = fc.oneof(
  fc.record({ type: fc.constant('text'), text: ODD_STRINGS }),
  fc.record({ type: fc.constantFrom('image_url', 'input_audio', 'file', ''), image_url: ANY_VALUE }),
)

const message = fc.record(
  {
    role: fc.oneof(
      { weight: 14, arbitrary: fc.constantFrom('user', 'system', 'assistant', 'developer', 'tool', 'function') },
      { weight: 1, arbitrary: fc.constantFrom('', 'bot', 'USER', null, 3) },
    ),
    content: fc.oneof(
      { weight: 12, arbitrary: fc.oneof(fc.lorem({ maxCount: 6 }), ODD_STRINGS) },
      { weight: 2, arbitrary: fc.array(contentPart, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.constantFrom(null, '', 42, { text: 'x' }) },
    ),
    name: ODD_STRINGS,
    reasoning: fc.oneof(ODD_STRINGS, fc.constant(null)),
    reasoning_content: ODD_STRINGS,
    tool_call_id: fc.string(),
    tool_calls: fc.oneof(fc.constant(null), fc.array(fc.object({ maxDepth: 1 }), { maxLength: 2 })),
  },
  { requiredKeys: ['role', 'content'] },
)

const jsonSchema = fc.constantFrom(
  { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] },
  { type: 'string', maxLength: 5 },
  { type: 'array', items: { type: 'boolean' }, maxItems: 3 },
  { enum: ['x', 'y'] },
  { type: 'nope' },
  {},
)

// Plausible values per field of the contract's request (§2.1); each field is sent with one of these or a random
// implausible value, so both the happy paths and the validators are exercised.
const PLAUSIBLE: Record<string, fc.Arbitrary<unknown>> = {
  frequency_penalty: plausibleNumber,
  presence_penalty: plausibleNumber,
  logit_bias: fc.dictionary(fc.integer({ min: -5, max: 300_000 }).map(String), fc.integer({ min: -200, max: 200 }), {
    maxKeys: 3,
  }),
  logprobs: fc.boolean(),
  top_logprobs: smallInt(-2, 25),
  max_tokens: smallInt(-1, 24),
  max_completion_tokens: smallInt(-1, 24),
  n: smallInt(-1, 3),
  response_format: fc.oneof(
    fc.constant({ type: 'text' }),
    fc.constant({ type: 'json_object' }),
    fc.constant({ type: 'json_schema' }),
    jsonSchema.map((schema) => ({ type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } })),
    fc.constant({ type: 'structural_tag', format: { type: 'const_string', value: 'x' } }),
    fc.constant({ type: 'structural_tag', structures: [{ begin: '<a>', end: '</a>' }], triggers: ['<a'] }),
    fc.constant({ type: 'xml' }),
  ),
  seed: fc.oneof(fc.integer(), fc.constantFrom(2 ** 63, -(2 ** 63) - 4096, 2 ** 53)),
  stop: fc.oneof(fc.string({ maxLength: 3 }), fc.array(fc.string({ maxLength: 3 }), { maxLength: 4 })),
  stream_options: fc.record(
    { include_usage: fc.option(fc.boolean()), continuous_usage_stats: fc.option(fc.boolean()) },
    { requiredKeys: [] },
  ),
  temperature: fc.double({ min: -1, max: 3, noNaN: true }),
  top_p: fc.double({ min: -0.5, max: 1.5, noNaN: true }),
  top_k: smallInt(-2, 50),
  min_p: fc.double({ min: -0.5, max: 1.5, noNaN: true }),
  repetition_penalty: fc.double({ min: -1, max: 3, noNaN: true }),
  tools: fc.oneof(
    fc.constant([]),
    fc.constant([{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }]),
  ),
  tool_choice: fc.constantFrom('none', 'auto', 'required', { type: 'function', function: { name: 'f' } }),
  reasoning_effort: fc.constantFrom('low', 'medium', 'high', 'max', ''),
  include_reasoning: fc.boolean(),
  parallel_tool_calls: fc.boolean(),
  user: ODD_STRINGS,
  use_beam_search: fc.boolean(),
  length_penalty: plausibleNumber,
  prompt_logprobs: smallInt(-2, 5),
  stop_token_ids: fc.array(smallInt(-1, 300_000), { maxLength: 3 }),
  include_stop_str_in_output: fc.boolean(),
  ignore_eos: fc.boolean(),
  min_tokens: smallInt(-1, 30),
  skip_special_tokens: fc.boolean(),
  spaces_between_special_tokens: fc.boolean(),
  truncate_prompt_tokens: fc.oneof(smallInt(-2, 10), fc.constant(10_000_000)),
  allowed_token_ids: fc.array(smallInt(-1, 300_000), { maxLength: 4 }),
  bad_words: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
  echo: fc.boolean(),
  add_generation_prompt: fc.boolean(),
  continue_final_message: fc.boolean(),
  add_special_tokens: fc.boolean(),
  documents: fc.array(fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 10 })), { maxLength: 2 }),
  chat_template: fc.constantFrom('{{ messages[0].content }}', '{% for', ''),
  chat_template_kwargs: fc.oneof(fc.object({ maxDepth: 1 }), fc.constant({ chat_template: '{{ x }}' })),
  mm_processor_kwargs: fc.object({ maxDepth: 1 }),
  structured_outputs: fc.oneof(
    fc.constant({ choice: ['yes', 'no'] }),
    fc.constant({ choice: [] }),
    fc.constant({ regex: '[a-c]{1,3}' }),
    fc.constant({ regex: '(' }),
    jsonSchema.map((json) => ({ json })),
    fc.constant({ json_object: true }),
    fc.constant({ grammar: '' }),
    fc.constant({ json: {}, regex: 'a' }),
  ),
  priority: smallInt(-2, 2),
  request_id: ODD_STRINGS,
  return_tokens_as_token_ids: fc.boolean(),
  return_token_ids: fc.boolean(),
  cache_salt: fc.oneof(fc.string({ maxLength: 140 }), fc.constantFrom('', 'a@b', 'a/b', 'ok-salt')),
  kv_transfer_params: fc.object({ maxDepth: 1 }),
  engine_xargs: fc.dictionary(
    fc.string({ maxLength: 5 }),
    fc.oneof(fc.string(), fc.integer(), fc.array(fc.integer())),
    {
      maxKeys: 2,
    },
  ),
  repetition_detection: fc.record(
    { max_pattern_size: smallInt(-1, 4), min_pattern_size: smallInt(-1, 4), min_count: smallInt(-1, 4) },
    { requiredKeys: [] },
  ),
  vllm_xargs: fc.object({ maxDepth: 1 }),
  guided_json: jsonSchema,
  best_of: smallInt(0, 3),
}
const FIELDS = Object.keys(PLAUSIBLE)

/**
 * A body near a valid one: a model, messages and up to `maxFields` of the optional fields, each plausible or (with
 * weight `oddWeight` against 3) implausible.
 */
function nearValid(model: string, maxFields: number, oddWeight: number): fc.Arbitrary<Record<string, unknown>> {
  const value = (name: string) =>
    oddWeight === 0
      ? (PLAUSIBLE[name] as fc.Arbitrary<unknown>)
      : fc.oneof(
          { weight: 3, arbitrary: PLAUSIBLE[name] as fc.Arbitrary<unknown> },
          { weight: oddWeight, arbitrary: implausible },
        )
  const fields = fc
    .uniqueArray(fc.constantFrom(...FIELDS), { maxLength: maxFields })
    .chain((names) => fc.tuple(...names.map((name) => value(name).map((v) => [name, v] as const))))
    .map((pairs) => Object.fromEntries(pairs))
  return fc
    .record({
      model: fc.oneof(
        { weight: 8, arbitrary: fc.constant(model) },
        { weight: 1, arbitrary: fc.constantFrom(undefined, null, '', 'no/such-model', 7) },
      ),
      messages: fc.oneof(
        { weight: 8, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }) },
        { weight: 1, arbitrary: fc.oneof(fc.constant([]), implausible) },
      ),
      stream: fc.oneof({ weight: 10, arbitrary: fc.boolean() }, { weight: 1, arbitrary: implausible }),
      // Keeps generation short on the reference engine unless the fuzzed fields override it.
      max_tokens: fc.constant(8),
      fields,
    })
    .map(({ fields: extra, ...body }) => {
      const out: Record<string, unknown> = { ...body, ...extra }
      if (out.model === undefined) delete out.model
      return out
    })
}

function cases(model: string): fc.Arbitrary<Case> {
  const json = (value: unknown) => JSON.stringify(value) ?? 'null'
  const sent = (b: Record<string, unknown>) => ({ text: json(b), stream: b.stream === true })
  const text = fc.oneof(
    { weight: 6, arbitrary: nearValid(model, 3, 0).map(sent) },
    { weight: 6, arbitrary: nearValid(model, 6, 1).map(sent) },
    { weight: 1, arbitrary: ANY_VALUE.map((v) => ({ text: json(v), stream: false })) },
    { weight: 1, arbitrary: DEEP.map((t) => ({ text: t, stream: false })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(nearValid(model, 6, 1), fc.nat())
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
