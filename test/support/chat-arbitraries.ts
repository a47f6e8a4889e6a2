import fc from 'fast-check'
import { ANY_VALUE, HUGE_NUMBERS, ODD_STRINGS } from './arbitraries.js'

// Chat-completion request bodies for property tests: every field of the contract's request (docs/inference.md §2.1)
// with plausible values, and implausible ones mixed in on request.

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

// Plausible values per field of the contract's request (docs/inference.md §2.1); each field is sent with one of these
// or a random implausible value, so both the happy paths and the validators are exercised.
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
export function nearValidChatBody(
  model: string,
  maxFields: number,
  oddWeight: number,
): fc.Arbitrary<Record<string, unknown>> {
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
