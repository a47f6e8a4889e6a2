import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { putModel } from '#shared/db/model-repository'
import { resetEngines } from '#shared/engine/engine'
import { referenceCatalogModel } from '#shared/engine/settings'
import { pyRepr } from '#shared/errors/inference-errors'
import { clearCatalogCache } from '#shared/inference/catalog'
import { jsonInit } from '../../support/auth.js'
import { addUpstreamModel, upstreamModelFixture } from '../../support/models.js'

const { upstream, caller, model } = await upstreamModelFixture()

const messages = [{ role: 'user', content: 'Hello there' }]

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await app.request('/v1/chat/completions', jsonInit(body, { ...caller.bearer, ...headers }))
  return {
    status: res.status,
    body: (await res.json()) as { error: { message: string; type: string; param: string | null; code: number } },
  }
}

async function expectRequestError(body: unknown, message: string, param: string | null) {
  // Act
  const res = await post(body)

  // Assess
  expect(res.status).toBe(400)
  expect(res.body.error.type).toBe('Bad Request')
  expect(res.body.error.code).toBe(400)
  expect(res.body.error.message).toMatch(
    /^1 validation error:\n {2}\{'type': 'value_error', 'loc': \('body',( 'repetition_detection'| 'structured_outputs')?\)/,
  )
  expect(res.body.error.message).toContain(`'msg': ${pyRepr(`Value error, ${message}`)}`)
  expect(res.body.error.param).toBe(param)
}

async function expectServingError(body: unknown, message: string, param?: string | null) {
  // Act
  const res = await post(body)

  // Assess
  expect(res.status).toBe(400)
  expect(res.body.error.type).toBe('BadRequestError')
  expect(res.body.error.message).toBe(message)
  expect(res.body.error.code).toBe(400)
  if (param !== undefined) expect(res.body.error.param).toBe(param)
}

// vLLM's `StructuredOutputsParams.__dict__` with every field at its default, as its messages print it.
const NO_CONSTRAINT: Record<string, string> = {
  json: 'None',
  regex: 'None',
  choice: 'None',
  grammar: 'None',
  json_object: 'None',
  disable_any_whitespace: 'False',
  disable_additional_properties: 'False',
  whitespace_pattern: 'None',
  structural_tag: 'None',
  _backend: 'None',
  _backend_was_auto: 'False',
}

/** The `__dict__` text with some fields set to the given Python reprs. */
function structuredDict(set: Record<string, string>): string {
  return `{${Object.entries({ ...NO_CONSTRAINT, ...set })
    .map(([k, v]) => `'${k}': ${v}`)
    .join(', ')}}`
}

const MULTIPLE = 'You can only use one kind of structured outputs constraint but multiple are specified: '
const NONE = 'You must use one kind of structured outputs constraint but none are specified: '

describe('POST /v1/chat/completions validation', () => {
  it('rejects a body that is not application/json with the contract message', async () => {
    // Act
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'text/plain' },
      body: JSON.stringify({ messages, model }),
    })

    // Assess
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      error: {
        message: "Unsupported Media Type: Only 'application/json' is allowed",
        type: 'Bad Request',
        param: null,
        code: 400,
      },
    })
  })

  it('rejects a body without a content type', async () => {
    const res = await app.request('/v1/chat/completions', { method: 'POST', headers: caller.bearer, body: '{}' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('Unsupported Media Type')
  })

  it('reports a missing messages field as a pydantic-style error at body.messages', async () => {
    const res = await post({ model })
    expect(res.status).toBe(400)
    expect(res.body.error.param).toBe('body.messages')
    expect(res.body.error.message).toMatch(
      /^1 validation error:\n {2}\{'type': 'missing', 'loc': \('body', 'messages'\), 'msg': 'Field required'/,
    )
  })

  it('keeps list indices in param, as vLLM does (body.messages.0.role)', async () => {
    // Act
    const res = await post({ model, messages: [{ role: 7, content: 'x' }] })

    // Assess
    expect(res.status).toBe(400)
    expect(res.body.error.message).toContain("'loc': ('body', 'messages', 0, 'role')")
    expect(res.body.error.param).toBe('body.messages.0.role')
  })

  it('reports wrongly typed fields, several at once', async () => {
    const res = await post({ messages, model, temperature: 'hot', n: 1.5, stream: 'maybe' })
    expect(res.status).toBe(400)
    expect(res.body.error.message).toMatch(/^3 validation errors:\n/)
    expect(res.body.error.message).toContain("'loc': ('body', 'temperature')")
    expect(res.body.error.message).toContain("'loc': ('body', 'n')")
    expect(res.body.error.message).toContain("'loc': ('body', 'stream')")
  })

  it('requires stream=True for stream_options, but lets an empty object through', async () => {
    await expectRequestError(
      { messages, model, stream_options: { include_usage: true } },
      'Stream options can only be defined when `stream=True`.',
      'stream_options',
    )
    expect((await post({ messages, model, stream_options: {}, stream: false })).status).toBe(200)
  })

  it('applies the logprobs rules in order', async () => {
    await expectRequestError(
      { messages, model, top_logprobs: 'x' },
      '`top_logprobs` must be an integer.',
      'top_logprobs',
    )
    await expectRequestError(
      { messages, model, prompt_logprobs: 'x' },
      '`prompt_logprobs` must be an integer.',
      'prompt_logprobs',
    )
    await expectRequestError(
      { messages, model, prompt_logprobs: 1, stream: true },
      '`prompt_logprobs` are not available when `stream=True`.',
      'prompt_logprobs',
    )
    await expectRequestError(
      { messages, model, prompt_logprobs: -1, stream: true },
      '`prompt_logprobs` are not available when `stream=True`.',
      'prompt_logprobs',
    )
    await expectRequestError(
      { messages, model, prompt_logprobs: -2 },
      '`prompt_logprobs` must be a positive value or -1.',
      'prompt_logprobs',
    )
    await expectRequestError(
      { messages, model, top_logprobs: -3 },
      '`top_logprobs` must be a positive value or -1.',
      'top_logprobs',
    )
    await expectRequestError(
      { messages, model, top_logprobs: 2 },
      'when using `top_logprobs`, `logprobs` must be set to true.',
      'top_logprobs',
    )
  })

  it('allows only one kind of structured-output constraint and a valid structural tag', async () => {
    await expectRequestError(
      { messages, model, structured_outputs: { json: {}, regex: 'a+' } },
      "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
      // vLLM's validator names no parameter, so param is its location.
      'body',
    )
    await expectRequestError(
      { messages, model, structured_outputs: { structural_tag: 'not json' } },
      'Invalid structured_outputs structural_tag specification.',
      'structured_outputs',
    )
  })

  it('refuses structured_outputs without exactly one constraint kind while parsing it, as StructuredOutputsParams does', async () => {
    await expectRequestError(
      { messages, model, structured_outputs: { json_object: true, regex: 'a' } },
      `${MULTIPLE}${structuredDict({ regex: "'a'", json_object: 'True' })}`,
      'body.structured_outputs',
    )
    await expectRequestError(
      { messages, model, structured_outputs: { grammar: 'root ::= "a"', choice: ['b'] } },
      `${MULTIPLE}${structuredDict({ choice: "['b']", grammar: `'root ::= "a"'` })}`,
      'body.structured_outputs',
    )
    // Flags print converted, as pydantic parsed them; a false json_object is still set (not None).
    await expectRequestError(
      { messages, model, structured_outputs: { json_object: 'no', regex: 'a', disable_any_whitespace: 1 } },
      `${MULTIPLE}${structuredDict({ regex: "'a'", json_object: 'False', disable_any_whitespace: 'True' })}`,
      'body.structured_outputs',
    )
    await expectRequestError(
      { messages, model, structured_outputs: { whitespace_pattern: ' ' } },
      `${NONE}${structuredDict({ whitespace_pattern: "' '" })}`,
      'body.structured_outputs',
    )
  })

  it('requires json_schema for a json_schema response format and a valid structural tag', async () => {
    await expectRequestError(
      { messages, model, response_format: { type: 'json_schema' } },
      "When response_format type is 'json_schema', the 'json_schema' field must be provided.",
      'response_format',
    )
    await expectRequestError(
      { messages, model, response_format: { type: 'structural_tag' } },
      'Invalid response_format structural_tag specification.',
      'response_format',
    )
  })

  it('rejects an unknown response_format type as a schema error', async () => {
    const res = await post({ messages, model, response_format: { type: 'xml' } })
    expect(res.status).toBe(400)
    expect(res.body.error.param).toMatch(/^body\.response_format/)
  })

  it('rejects an empty tools array and any tool_choice but "none"', async () => {
    await expectRequestError(
      { messages, model, tools: [] },
      '`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.',
      'tools',
    )
    await expectRequestError(
      { messages, model, tool_choice: 'auto' },
      'Invalid value for `tool_choice`: auto! Only "none" is supported.',
      'tool_choice',
    )
    await expectRequestError(
      { messages, model, tool_choice: { type: 'function', function: { name: 'f' } } },
      "Invalid value for `tool_choice`: {'type': 'function', 'function': {'name': 'f'}}! Only \"none\" is supported.",
      'tool_choice',
    )
  })

  it('accepts tool_choice "none" with tools and never forwards tool calls', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }]
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ messages, model, tools, tool_choice: 'none' }, caller.bearer),
    )
    expect(res.status).toBe(200)
    const body = (await res.json()) as { choices: { finish_reason: string }[] }
    expect(body.choices[0]?.finish_reason).toBe('stop')
  })

  it('refuses continue_final_message with add_generation_prompt: both sent (validator), or the default true (template)', async () => {
    await expectRequestError(
      { messages, model, continue_final_message: true, add_generation_prompt: true },
      'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
      'continue_final_message',
    )
    // The validator reads the raw body; Hugging Face's apply_chat_template then gets the default True (issue ask:
    // newest vLLM's template path, not the raw-body reading of docs/inference.md §3.6 that let this through).
    await expectServingError(
      { messages, model, continue_final_message: true },
      'continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead.',
    )
    expect((await post({ messages, model, continue_final_message: true, add_generation_prompt: false })).status).toBe(
      200,
    )
  })

  it('checks cache_salt', async () => {
    await expectRequestError(
      { messages, model, cache_salt: '' },
      "Parameter 'cache_salt' must be a non-empty string if provided.",
      'cache_salt',
    )
    await expectRequestError(
      { messages, model, cache_salt: 5 },
      "Parameter 'cache_salt' must be a non-empty string if provided.",
      'cache_salt',
    )
    const res = await post({ messages, model, cache_salt: 'a/b' })
    expect(res.status).toBe(400)
    expect(res.body.error.message).toContain(`"Value error, Parameter 'cache_salt' must be at most 128 characters`)
    expect((await post({ messages, model, cache_salt: 'x'.repeat(129) })).status).toBe(400)
    expect((await post({ messages, model, cache_salt: 'salt-1' })).status).toBe(200)
  })

  it('checks repetition_detection', async () => {
    await expectRequestError(
      { messages, model, repetition_detection: { max_pattern_size: 2, min_pattern_size: 3, min_count: 2 } },
      'max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. Set both to 0 to disable repetitive pattern detection.',
      'repetition_detection',
    )
    await expectRequestError(
      { messages, model, repetition_detection: { max_pattern_size: 4, min_count: 1 } },
      'min_count must be >= 2 to detect repetitive patterns in engine output. If you do not wish to detect repetitive patterns, set max_pattern_size to 0.',
      'repetition_detection',
    )
  })

  it('accepts the largest seed, 2^63-1, which JSON.parse rounds to 2^63, and forwards its exact digits', async () => {
    // Prepare
    const raw = (field: string, value: string) =>
      app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...caller.bearer },
        body: `{"model":${JSON.stringify(model)},"messages":${JSON.stringify(messages)},"${field}":${value}}`,
      })
    const before = upstream.seen.length

    // Act
    const largest = await raw('seed', '9223372036854775807')
    const beyond = await raw('seed', '9223372036854777856')
    const priority = await raw('priority', '9223372036854775807')

    // Assess
    expect(largest.status).toBe(200)
    expect(upstream.seen[before]?.raw).toContain('"seed":9223372036854775807')
    expect(upstream.seen[before]?.raw).not.toContain('9223372036854776000')
    expect(beyond.status).toBe(400)
    expect(((await beyond.json()) as { error: { param: string } }).error.param).toBe('body.seed')
    // Past the range check: the serving rule of a model without priority scheduling answers.
    expect(priority.status).toBe(400)
    expect(((await priority.json()) as { error: { type: string } }).error.type).toBe('BadRequestError')
  })

  it('enforces the seed, priority and truncate_prompt_tokens ranges', async () => {
    const seed = await post({ messages, model, seed: 2 ** 64 })
    expect(seed.status).toBe(400)
    expect(seed.body.error.message).toContain("'msg': 'Input should be less than or equal to 9223372036854775807'")
    expect(seed.body.error.param).toBe('body.seed')
    const priority = await post({ messages, model, priority: -(2 ** 64) })
    expect(priority.body.error.message).toContain('Input should be greater than or equal to -9223372036854775808')
    const truncate = await post({ messages, model, truncate_prompt_tokens: -2 })
    expect(truncate.status).toBe(400)
    expect(truncate.body.error.message).toContain('Input should be greater than or equal to -1')
    expect((await post({ messages, model, seed: -5, truncate_prompt_tokens: -1 })).status).toBe(200)
  })

  it('rejects a reasoning_effort outside low, medium and high', async () => {
    const res = await post({ messages, model, reasoning_effort: 'max' })
    expect(res.status).toBe(400)
    expect(res.body.error.message).toContain("'loc': ('body', 'reasoning_effort')")
  })

  it('ignores unknown fields and does not forward them', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await post({ messages, model, vllm_xargs: { a: 1 }, best_of: 3, something_new: true })

    // Assess
    expect(res.status).toBe(200)
    const forwarded = upstream.seen[before]?.body ?? {}
    expect(forwarded).not.toHaveProperty('best_of')
    expect(forwarded).not.toHaveProperty('something_new')
    expect(forwarded).not.toHaveProperty('vllm_xargs')
  })

  it('forwards max_completion_tokens over max_tokens and renames engine_xargs to vllm_xargs', async () => {
    const before = upstream.seen.length
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit(
        {
          messages: [{ role: 'user', content: 'one two three four' }],
          model,
          max_tokens: 1,
          max_completion_tokens: 3,
          engine_xargs: { k: 'v' },
        },
        caller.bearer,
      ),
    )
    const body = (await res.json()) as { choices: { message: { content: string }; finish_reason: string }[] }
    expect(body.choices[0]?.message.content).toBe('one two three')
    expect(body.choices[0]?.finish_reason).toBe('length')
    expect(upstream.seen[before]?.body.vllm_xargs).toEqual({ k: 'v' })
    expect(upstream.seen[before]?.body).not.toHaveProperty('engine_xargs')
  })

  it('honours the deprecated max_tokens alone', async () => {
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ messages: [{ role: 'user', content: 'one two three four' }], model, max_tokens: 2 }, caller.bearer),
    )
    const body = (await res.json()) as { choices: { message: { content: string } }[] }
    expect(body.choices[0]?.message.content).toBe('one two')
  })
})

describe('POST /v1/chat/completions serving rules', () => {
  it('refuses a non-zero priority on a model without priority scheduling and accepts it on one with', async () => {
    await expectServingError({ messages, model, priority: 3 }, 'Got priority 3 but Priority scheduling is not enabled.')
    const scheduled = await addUpstreamModel(upstream.baseUrl, [caller.entity], { scheduling: 'priority' })
    expect((await post({ messages, model: scheduled.id, priority: 3 })).status).toBe(200)
  })

  it('refuses a model whose tokenizer has no chat template', async () => {
    const bare = await addUpstreamModel(upstream.baseUrl, [caller.entity], { hasChatTemplate: false })
    await expectServingError(
      { messages, model: bare.id },
      'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.',
    )
  })

  it('refuses request chat templates and multimodal kwargs by default', async () => {
    const untrusted =
      'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.'
    await expectServingError({ messages, model, chat_template: '{{ messages }}' }, untrusted)
    await expectServingError({ messages, model, chat_template_kwargs: { chat_template: 'x' } }, untrusted)
    await expectServingError(
      { messages, model, mm_processor_kwargs: { size: 1 } },
      'Per-request mm_processor_kwargs are disabled by default because they can change multimodal preprocessing resource usage. Start the server with --trust-request-mm-kwargs only when clients are trusted.',
    )
  })

  it('checks truncation, token-id lists and structured outputs', async () => {
    const small = await addUpstreamModel(upstream.baseUrl, [caller.entity], { maxModelLen: 16 })
    await expectServingError(
      { messages, model: small.id, truncate_prompt_tokens: 17 },
      'truncate_prompt_tokens=17 cannot be greater than max_model_len - max_tokens = 16. Please request a smaller truncation size.',
      'truncate_prompt_tokens',
    )
    // vLLM's `TokenizeParams`: the room is what the output budget leaves, named after the field the request used.
    await expectServingError(
      { messages, model: small.id, truncate_prompt_tokens: 12, max_completion_tokens: 5 },
      'truncate_prompt_tokens=12 cannot be greater than max_model_len - max_completion_tokens = 11. Please request a smaller truncation size.',
      'truncate_prompt_tokens',
    )
    await expectServingError(
      { messages, model: small.id, max_tokens: 17, truncate_prompt_tokens: -1 },
      'max_tokens=17cannot be greater than max_model_len=max_total_tokens=16. Please request fewer output tokens.',
      'max_tokens',
    )
    await expectServingError({ messages, model, allowed_token_ids: [] }, 'allowed_token_ids is not None and empty!')
    await expectServingError(
      { messages, model, structured_outputs: { choice: [] } },
      "Choice '[]' cannot be an empty list",
    )
    await expectServingError(
      { messages, model, structured_outputs: { grammar: '  ' } },
      'structured_outputs.grammar cannot be an empty string',
    )
  })

  it('refuses a blank json string, a false json_object and a regex with NUL while serving, without a parameter', async () => {
    // Prepare
    const jsonObject =
      'structured_outputs.json_object must be True if set; omit structured_outputs to disable structured outputs'

    // Act
    const schemaReplacesBlank = await post({
      messages,
      model,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      structured_outputs: { json: ' ' },
    })
    const formatSetsJsonObject = await post({
      messages,
      model,
      response_format: { type: 'json_object' },
      structured_outputs: { json_object: false },
    })

    // Assess
    const blankJson = 'structured_outputs.json cannot be an empty string'
    await expectServingError({ messages, model, structured_outputs: { json: '' } }, blankJson, null)
    // Blank as Python's str.strip() sees it: U+001C and U+0085 are spaces there, not for JavaScript's trim().
    await expectServingError({ messages, model, structured_outputs: { json: ' \n\x1c\x85' } }, blankJson, null)
    await expectServingError({ messages, model, structured_outputs: { json_object: false } }, jsonObject, null)
    // pydantic's lax bool reads 'false' as False.
    await expectServingError({ messages, model, structured_outputs: { json_object: 'false' } }, jsonObject, null)
    await expectServingError(
      { messages, model, structured_outputs: { regex: 'a\u0000b' } },
      "structured_outputs.regex must not contain a NUL character ('\\x00')",
      null,
    )
    // vLLM checks the params once response_format is merged in: its schema or json_object replaces the field.
    expect(schemaReplacesBlank.status).toBe(200)
    expect(formatSetsJsonObject.status).toBe(200)
  })

  it('checks sampling parameter ranges with vLLM messages, naming the parameter only where vLLM does', async () => {
    await expectServingError({ messages, model, n: 0 }, 'n must be at least 1, got 0.', null)
    await expectServingError(
      { messages, model, temperature: -1 },
      'temperature must be non-negative, got -1.0.',
      'temperature',
    )
    await expectServingError({ messages, model, top_p: 0 }, 'top_p must be in (0, 1], got 0.0.', 'top_p')
    await expectServingError({ messages, model, top_k: -2 }, 'top_k must be 0 (disable), or at least 1, got -2.', null)
    await expectServingError({ messages, model, min_p: 2 }, 'min_p must be in [0, 1], got 2.0.', null)
    await expectServingError(
      { messages, model, presence_penalty: 3 },
      'presence_penalty must be in [-2, 2], got 3.0.',
      null,
    )
    await expectServingError(
      { messages, model, frequency_penalty: -3 },
      'frequency_penalty must be in [-2, 2], got -3.0.',
      null,
    )
    await expectServingError(
      { messages, model, repetition_penalty: 0 },
      'repetition_penalty must be greater than zero, got 0.0.',
      null,
    )
    await expectServingError(
      { messages, model, max_completion_tokens: 0 },
      'max_tokens must be at least 1, got 0.',
      'max_tokens',
    )
    await expectServingError(
      { messages, model, min_tokens: -1 },
      'min_tokens must be greater than or equal to 0, got -1.',
      null,
    )
    await expectServingError(
      { messages, model, max_tokens: 2, min_tokens: 5 },
      'min_tokens must be less than or equal to max_tokens=2, got 5.',
      null,
    )
    await expectServingError({ messages, model, stop: ['a', ''] }, 'stop cannot contain an empty string.', null)
    await expectServingError(
      { messages, model, n: 16385 },
      'n must be at most 16384, got 16385. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.',
      null,
    )
    await expectServingError(
      { messages, model, allowed_token_ids: [] },
      'allowed_token_ids is not None and empty!',
      'allowed_token_ids',
    )
  })

  it('refuses n > 1 with greedy sampling, an empty bad word and an n above vLLM bound, with vLLM messages', async () => {
    // Prepare
    const seenBefore = upstream.seen.length

    // Act
    const beams = await post({ messages, model, n: 2, temperature: 0, use_beam_search: true })

    // Assess
    await expectServingError(
      { messages, model, n: 2, temperature: 0 },
      'n must be 1 when using greedy sampling, got 2.',
    )
    await expectServingError(
      { messages, model, bad_words: ['bad', '', 'bad'] },
      "bad_words cannot contain an empty string. Got bad_words=['bad', '']",
    )
    await expectServingError(
      { messages, model, n: 16385 },
      'n must be at most 16384, got 16385. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.',
    )
    // Beam search is not sampling: vLLM builds no SamplingParams for it, so greedy n > 1 is its normal case.
    expect(beams.status).toBe(200)
    expect(upstream.seen.length).toBe(seenBefore + 1)
  })

  it('raises a temperature below 0.01 to 0.01 (sampling, so n > 1 is allowed) and refuses one above 2', async () => {
    // Prepare
    const seenBefore = upstream.seen.length

    // Act
    const tiny = await post({ messages, model, n: 3, temperature: 1e-6 })

    // Assess
    expect(tiny.status).toBe(200)
    expect(upstream.seen.length).toBe(seenBefore + 1)
    await expectServingError(
      { messages, model, temperature: 2.5 },
      'temperature must be in [0, 2], got 2.5.',
      'temperature',
    )
    await expectServingError(
      { messages, model, temperature: 3 },
      'temperature must be in [0, 2], got 3.0.',
      'temperature',
    )
    expect((await post({ messages, model, temperature: 2 })).status).toBe(200)
  })

  it('refuses a json_schema response format without a schema as newest vLLM does', async () => {
    // Prepare
    const none =
      "{'json': None, 'regex': None, 'choice': None, 'grammar': None, 'json_object': None, 'disable_any_whitespace': False, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}"
    const spaced = none.replace("'disable_any_whitespace': False", "'disable_any_whitespace': True")

    // Act
    const withRegex = await post({
      messages,
      model,
      response_format: { type: 'json_schema', json_schema: { name: 'x' } },
      structured_outputs: { regex: 'a+' },
    })

    // Assess
    const message = 'You must use one kind of structured outputs constraint but none are specified: '
    await expectServingError(
      { messages, model, response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
      `${message}${none}`,
    )
    // structured_outputs without a constraint fails as it is parsed, before the response format is merged in.
    await expectRequestError(
      {
        messages,
        model,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: null } },
        structured_outputs: { disable_any_whitespace: true },
      },
      `${message}${spaced}`,
      'body.structured_outputs',
    )
    expect(withRegex.status).toBe(200)
  })

  it('refuses a response_format that adds a second constraint kind to structured_outputs, without a parameter', async () => {
    // Act
    const same = await post({
      messages,
      model,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      structured_outputs: { json: { type: 'string' } },
    })

    // Assess
    await expectServingError(
      { messages, model, response_format: { type: 'json_object' }, structured_outputs: { regex: 'a' } },
      `${MULTIPLE}${structuredDict({ regex: "'a'", json_object: 'True' })}`,
      null,
    )
    await expectServingError(
      {
        messages,
        model,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
        structured_outputs: { choice: ['b'], disable_any_whitespace: true },
      },
      `${MULTIPLE}${structuredDict({ json: "{'type': 'object'}", choice: "['b']", disable_any_whitespace: 'True' })}`,
      null,
    )
    // A structural tag is passed on as Python's json.dumps of the parsed format, non-ASCII escaped.
    await expectServingError(
      {
        messages,
        model,
        response_format: { type: 'structural_tag', format: { type: 'const_string', value: 'é' } },
        structured_outputs: { grammar: 'root ::= "a"' },
      },
      `${MULTIPLE}${structuredDict({
        grammar: `'root ::= "a"'`,
        structural_tag: `'{"type": "structural_tag", "format": {"type": "const_string", "value": "\\\\u00e9"}}'`,
      })}`,
      null,
    )
    // The format's schema replaces structured_outputs.json: still one kind.
    expect(same.status).toBe(200)
  })
})

// Reference models: one with a small context, so that the effective max_tokens without a requested one stays small,
// and one whose generation config sets max_tokens.
const reference = referenceCatalogModel({ id: `loom/reference-${randomUUID().slice(0, 8)}`, maxModelLen: 64 })
const capped = referenceCatalogModel({
  id: `loom/reference-${randomUUID().slice(0, 8)}`,
  backend: { kind: 'reference', settings: { generationConfig: { max_tokens: 20 } } },
})
await putModel(reference)
await putModel(capped)
clearCatalogCache()

describe('POST /v1/chat/completions on the reference engine', () => {
  type Completion = { choices: { message: { content: string } }[]; usage: { prompt_tokens: number } }
  const complete = async (body: Record<string, unknown>) => {
    const res = await post({ messages, model: reference.id, ...body })
    return { ...res, completion: res.body as unknown as Completion }
  }
  const contents = (c: Completion) => c.choices.map((choice) => choice.message.content)
  const long = [{ role: 'user', content: 'abcdefghij'.repeat(5) }]

  it("answers vLLM's TokenizeParams refusals: output budget, prompt room and truncation size", async () => {
    // Act
    const overPrompt = await complete({ messages: long, max_tokens: 5 })
    const overOutput = await complete({ max_tokens: 65 })
    const overCompletion = await complete({ max_completion_tokens: 65 })
    const overTruncate = await complete({ messages: long, truncate_prompt_tokens: 60, max_tokens: 5 })

    // Assess
    expect(overPrompt.status).toBe(400)
    expect(overPrompt.body.error.param).toBe('input_tokens')
    expect(overPrompt.body.error.message).toMatch(
      /^You passed \d+ input tokens and requested 5 output tokens\. However, the model's context length is only 64 tokens, resulting in a maximum input length of 59 tokens\. Please reduce the length of the input prompt\.$/,
    )
    expect(overOutput.body.error).toMatchObject({
      message:
        'max_tokens=65cannot be greater than max_model_len=max_total_tokens=64. Please request fewer output tokens.',
      param: 'max_tokens',
    })
    expect(overCompletion.body.error).toMatchObject({
      message:
        'max_completion_tokens=65cannot be greater than max_model_len=max_total_tokens=64. Please request fewer output tokens.',
      param: 'max_completion_tokens',
    })
    expect(overTruncate.body.error).toMatchObject({
      message:
        'truncate_prompt_tokens=60 cannot be greater than max_model_len - max_tokens = 59. Please request a smaller truncation size.',
      param: 'truncate_prompt_tokens',
    })
  })

  it('truncates to max_model_len less max_tokens for -1, and to nothing (an empty prompt) for 0', async () => {
    // Act
    const whole = await complete({ messages: long, truncate_prompt_tokens: -1, max_tokens: 5 })
    const none = await complete({ truncate_prompt_tokens: 0, max_tokens: 3 })

    // Assess
    expect(whole.status).toBe(200)
    expect(whole.completion.usage.prompt_tokens).toBe(59)
    expect(none.status).toBe(400)
    expect(none.body.error.message).toBe('The decoder prompt cannot be empty')
  })

  it('refuses min_tokens above the effective max_tokens when the request sets none, as vLLM does', async () => {
    // Prepare: without max_tokens the budget is the context left after the prompt (vLLM's get_max_tokens)
    const probe = await complete({ max_tokens: 1 })
    const budget = 64 - probe.completion.usage.prompt_tokens

    // Act
    const atBudget = await complete({ min_tokens: budget, ignore_eos: true })
    const above = await complete({ min_tokens: budget + 1 })
    const aboveConfig = await post({ messages, model: capped.id, min_tokens: 21 })

    // Assess
    expect(atBudget.status).toBe(200)
    expect(above.status).toBe(400)
    expect(above.body.error).toEqual({
      message: `min_tokens must be less than or equal to max_tokens=${budget}, got ${budget + 1}.`,
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
    // The generation config's max_tokens stands in for an absent one.
    expect(aboveConfig.body.error.message).toBe('min_tokens must be less than or equal to max_tokens=20, got 21.')
  })

  const TOOL_TAG = { begin: '<b>', content: { type: 'const_string', value: 'x' }, end: '</b>' }
  it.each([
    ['an unknown format type', { format: { type: 'nope' } }],
    ['a tag no trigger starts', { format: { type: 'triggered_tags', triggers: ['<a'], tags: [TOOL_TAG] } }],
    ['const_string without value', { format: { type: 'const_string' } }],
    ['a legacy begin no trigger starts', { structures: [{ begin: '<x>', end: '</x>' }], triggers: ['<y'] }],
    ['a legacy empty trigger', { structures: [{ begin: '<x>', end: '</x>' }], triggers: [''] }],
  ])('answers a structural tag xgrammar refuses (%s) with vLLM request-validation 400', async (_, tag) => {
    await expectRequestError(
      { messages, model: reference.id, response_format: { type: 'structural_tag', ...tag } },
      'Invalid response_format structural_tag specification.',
      'response_format',
    )
    await expectRequestError(
      { messages, model: reference.id, structured_outputs: { structural_tag: { type: 'structural_tag', ...tag } } },
      'Invalid structured_outputs structural_tag specification.',
      'structured_outputs',
    )
  })

  it('serves a structured-outputs backend named in the request as if none were named, as vLLM drops it', async () => {
    // Prepare: `backend` is no field of vLLM's StructuredOutputsParams, `_backend` and `_backend_was_auto` are
    // init=False, so pydantic drops all three and the server-wide backend is used (docs/inference.md §3.3).
    const choice = ['yes', 'no']

    // Act
    const named = await complete({ max_tokens: 4, structured_outputs: { choice, backend: 'xgrammar' } })
    const internal = await complete({
      max_tokens: 4,
      structured_outputs: { choice, _backend: 'outlines', _backend_was_auto: true },
    })
    const upstreamNamed = await post({ messages, model, structured_outputs: { regex: 'a', backend: 'xgrammar' } })

    // Assess
    expect(named.status).toBe(200)
    expect(choice).toContain(contents(named.completion)[0])
    expect(internal.status).toBe(200)
    expect(choice).toContain(contents(internal.completion)[0])
    expect(upstreamNamed.status).toBe(200)
    // The constraint-count error prints the dataclass as parsed: `_backend` None whatever was sent.
    await expectRequestError(
      { messages, model: reference.id, structured_outputs: { regex: 'a', json_object: true, _backend: 'outlines' } },
      `${MULTIPLE}${structuredDict({ regex: "'a'", json_object: 'True' })}`,
      'body.structured_outputs',
    )
  })

  it('keeps the engine 400 for a structural tag xgrammar accepts but the engine cannot enforce', async () => {
    // Act
    const res = await complete({
      response_format: { type: 'structural_tag', format: { type: 'qwen_xml_parameter', json_schema: {} } },
    })

    // Assess
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ type: 'BadRequestError', param: 'structured_outputs' })
    expect(res.body.error.message).toContain("format type 'qwen_xml_parameter' is not supported")
  })

  it('refuses out-of-vocabulary stop_token_ids, listed once each, on param stop_token_ids', async () => {
    // Act
    const res = await complete({ stop_token_ids: [999, 5, 999, -1] })
    const beams = await complete({ stop_token_ids: [999], use_beam_search: true, n: 2, max_tokens: 4 })
    const upstreamModel = await post({ messages, model, stop_token_ids: [999] })

    // Assess
    expect(res.status).toBe(400)
    expect(res.body.error).toEqual({
      message: 'token_id(s) [999, -1] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: 262',
      type: 'BadRequestError',
      param: 'stop_token_ids',
      code: 400,
    })
    // vLLM's beam search passes no stop token ids on; the gateway has no tokenizer for an upstream model.
    expect(beams.status).toBe(200)
    expect(upstreamModel.status).toBe(200)
  })

  it('samples a seed of -1 as an unseeded request, as vLLM reads it as no seed', async () => {
    // Prepare
    const body = { temperature: 1, max_tokens: 24 }

    // Act: the same two requests from a cold engine, without a seed and with seed -1
    resetEngines()
    const unseeded = [await complete(body), await complete(body)].map((r) => contents(r.completion))
    resetEngines()
    const minusOne = [await complete({ ...body, seed: -1 }), await complete({ ...body, seed: -1 })].map((r) =>
      contents(r.completion),
    )

    // Assess
    expect(minusOne).toEqual(unseeded)
    expect(minusOne[0]).not.toEqual(minusOne[1])
  })

  it('samples a temperature below 0.01 at 0.01, so n > 1 is allowed', async () => {
    // Prepare: four control characters the model has never seen tie for every position, so only greedy decoding
    // always picks the same one
    const tied = { allowed_token_ids: [1, 2, 3, 4], n: 4, seed: 3, max_tokens: 12, return_token_ids: true }
    const ids = (c: Completion) => (c.choices as unknown as { token_ids: number[] }[]).map((x) => x.token_ids.join())

    // Act
    const tiny = await complete({ ...tied, temperature: 1e-6 })
    const floor = await complete({ ...tied, temperature: 0.01 })

    // Assess
    expect(tiny.status).toBe(200)
    expect(ids(tiny.completion)).toEqual(ids(floor.completion))
    expect(new Set(ids(tiny.completion)).size).toBeGreaterThan(1)
  })

  it('names the parameter of the engine checks where vLLM does', async () => {
    // Act
    const logprobs = await complete({ logprobs: true, top_logprobs: 21 })
    const promptLogprobs = await complete({ prompt_logprobs: 21 })
    const allowed = await complete({ allowed_token_ids: [5000] })
    const n = await complete({ n: 129 })

    // Assess
    expect(logprobs.body.error).toMatchObject({
      message: 'Requested sample logprobs of 21, which is greater than max allowed: 20',
      param: 'logprobs',
    })
    expect(promptLogprobs.body.error).toMatchObject({
      message: 'Requested prompt logprobs of 21, which is greater than max allowed: 20',
      param: 'prompt_logprobs',
    })
    expect(allowed.body.error).toMatchObject({
      message: 'allowed_token_ids contains out-of-vocab token id!',
      param: 'allowed_token_ids',
    })
    expect(n.body.error).toMatchObject({
      message:
        'n must be at most 128, got 129. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.',
      param: null,
    })
  })
})

describe('POST /v1/chat/completions project header', () => {
  it('answers 400 naming the header that carried a malformed project, whichever the fault', async () => {
    // Prepare: not `<entity>/<project>`, and a project name W&B refuses
    const sent = [
      ['Compat-Project', 'bare'],
      ['OpenAI-Project', 'bare'],
      ['Compat-Project', `${caller.entity}/x#y`],
      ['OpenAI-Project', `${caller.entity}/x:y`],
    ] as const

    // Act
    const answers = await Promise.all(sent.map(([name, value]) => post({ messages, model }, { [name]: value })))

    // Assess
    expect(answers.map((res) => res.status)).toEqual([400, 400, 400, 400])
    expect(answers.map((res) => res.body.error.param)).toEqual(sent.map(([name]) => name))
    expect(answers[2]?.body.error.message).toContain("'#'")
  })

  it('names Compat-Project when both headers are sent, as its value is the one used', async () => {
    // Act
    const res = await post({ messages, model }, { 'Compat-Project': 'bare', 'OpenAI-Project': `${caller.entity}/ok` })

    // Assess
    expect(res.status).toBe(400)
    expect(res.body.error.param).toBe('Compat-Project')
  })

  it('still answers 403 for a well-formed project of a foreign entity', async () => {
    // Act
    const res = await post({ messages, model }, { 'Compat-Project': 'someone-else/x#y' })

    // Assess
    expect(res.status).toBe(403)
    expect(res.body.error.param).toBeNull()
  })
})
