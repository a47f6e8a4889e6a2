import { config } from '#shared/config'
import { maxModelLenOf } from '#shared/engine/settings'
import { BadRequestError } from '#shared/errors/http-error'
import { pyRepr } from '#shared/errors/inference-errors'
import { checkMessages } from '#shared/inference/message-rules'
import { constraintCountError } from '#shared/inference/validate-request'
import { type ChatCompletionRequest, requestedMaxTokens } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

// Rules vLLM raises while serving (docs/inference.md §3.4, §3.8–3.11 and §3.13, `SamplingParams`): answered as 400
// `BadRequestError`. The ones that need the tokenizer (prompt length, vocabulary) belong to the backend. `param` is
// the `parameter=` vLLM's `VLLMValidationError` carries, and null where it carries none (docs/inference.md §4.2).

/** Formats a float field the way Python prints it (`-1` → `-1.0`), as vLLM's messages do. */
function pyFloat(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value)
}

function bad(message: string, param?: string): never {
  throw new BadRequestError(message, param === undefined ? {} : { param })
}

/** An int as Python prints it: every digit (a JSON 1.8e308 is an integral float, which pydantic takes as an int). */
export function pyInt(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString()
}

/** vLLM's bound on `n` (`VLLM_MAX_N_SEQUENCES`, default 16384), applied to every model. */
export const MAX_N_SEQUENCES = 16384

/** vLLM's message for an `n` above a bound (`_verify_num_sequences`); the reference engine uses it with its `maxN`. */
export function nTooLarge(n: number, max: number): never {
  // vLLM's message names its environment variable whatever the bound; Loom's bounds are docs/inference.md §3.13's.
  bad(
    `n must be at most ${max}, got ${pyInt(n)}. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.`,
  )
}

/** vLLM samples greedily below this temperature (`_SAMPLING_EPS`). */
export const GREEDY_BELOW = 1e-5

// vLLM's `_MAX_TEMP`: `SamplingParams.__post_init__` raises a temperature in (0, 0.01) to it before any check.
const MIN_TEMPERATURE = 0.01

/** The temperature vLLM samples with: one in (0, 0.01) is raised to 0.01, so only 0 is greedy. */
export function samplingTemperature(temperature: number): number {
  return temperature > 0 && temperature < MIN_TEMPERATURE ? MIN_TEMPERATURE : temperature
}

/** vLLM's temperature checks in `_verify_args` (after the raise to 0.01), which name the parameter. */
export function checkTemperature(temperature: number): void {
  if (temperature < 0) bad(`temperature must be non-negative, got ${pyFloat(temperature)}.`, 'temperature')
  // Newest vLLM only; releases take any non-negative temperature (docs/inference.md §3.13).
  if (temperature > 2) bad(`temperature must be in [0, 2], got ${pyFloat(temperature)}.`, 'temperature')
}

/** vLLM's `_verify_greedy_sampling`: greedy sampling has one answer, so `n > 1` is refused (not for beam search). */
export function checkGreedyN(n: number, temperature: number, beamSearch: boolean): void {
  if (!beamSearch && samplingTemperature(temperature) < GREEDY_BELOW && n > 1) {
    bad(`n must be 1 when using greedy sampling, got ${n}.`)
  }
}

/** vLLM's `_verify_args` message for a `min_tokens` above the effective `max_tokens` (no parameter). */
export function minTokensAboveMax(min: number, max: number): never {
  bad(`min_tokens must be less than or equal to max_tokens=${max}, got ${min}.`)
}

function checkSampling(r: ChatCompletionRequest): void {
  if (r.n !== undefined && r.n !== null && r.n < 1) bad(`n must be at least 1, got ${r.n}.`)
  if (typeof r.n === 'number' && r.n > MAX_N_SEQUENCES) nTooLarge(r.n, MAX_N_SEQUENCES)
  for (const field of ['presence_penalty', 'frequency_penalty'] as const) {
    const v = r[field]
    if (typeof v === 'number' && (v < -2 || v > 2)) bad(`${field} must be in [-2, 2], got ${pyFloat(v)}.`)
  }
  const { repetition_penalty: rep, temperature: t, top_p: p, top_k: k, min_p: mp } = r
  if (typeof rep === 'number' && rep <= 0) bad(`repetition_penalty must be greater than zero, got ${pyFloat(rep)}.`)
  if (typeof t === 'number') checkTemperature(t)
  if (typeof p === 'number' && (p <= 0 || p > 1)) bad(`top_p must be in (0, 1], got ${pyFloat(p)}.`, 'top_p')
  // vLLM normalises -1 to 0 (disabled) before this check.
  if (typeof k === 'number' && k < -1) bad(`top_k must be 0 (disable), or at least 1, got ${k}.`)
  if (typeof mp === 'number' && (mp < 0 || mp > 1)) bad(`min_p must be in [0, 1], got ${pyFloat(mp)}.`)
  // Without a requested maximum the effective one needs the prompt length: the backend checks min_tokens then.
  const max = requestedMaxTokens(r)
  if (max !== undefined && max < 1) bad(`max_tokens must be at least 1, got ${max}.`, 'max_tokens')
  const min = r.min_tokens
  if (min !== undefined && min < 0) bad(`min_tokens must be greater than or equal to 0, got ${min}.`)
  if (min !== undefined && max !== undefined && min > max) minTokensAboveMax(min, max)
  const stops = typeof r.stop === 'string' ? [r.stop] : (r.stop ?? [])
  if (stops.some((s) => s === '')) bad('stop cannot contain an empty string.')
  const badWords = r.bad_words ?? []
  if (badWords.includes('')) {
    // vLLM drops duplicates (`dict.fromkeys`) before it checks, so the message lists each word once.
    bad(`bad_words cannot contain an empty string. Got bad_words=${pyRepr([...new Set(badWords)])}`)
  }
  // Only a temperature the request sets is known here; a model's generation config is the backend's to apply.
  if (typeof t === 'number') checkGreedyN(r.n ?? 1, t, r.use_beam_search === true)
}

// Python's `json.dumps` with its defaults: `, ` and `: ` separators, every non-ASCII character escaped.
function pyJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(', ')}]`
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyJsonDumps(k)}: ${pyJsonDumps(v)}`)
      .join(', ')}}`
  }
  const text = JSON.stringify(value ?? null)
  return typeof value === 'string'
    ? text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : text
}

// pydantic's `model_dump(by_alias=True)`: the declared fields in order (a missing optional one as null), then the
// extra keys the model allows.
function dump(value: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of fields) out[key] = value[key] ?? null
  for (const [key, v] of Object.entries(value)) if (!fields.includes(key)) out[key] = v
  return out
}

// What newest vLLM's `structured_outputs_from_response_format` sets on `structured_outputs` for a response format.
function responseFormatConstraint(r: ChatCompletionRequest): Record<string, unknown> | undefined {
  const rf = r.response_format as Record<string, unknown> | null | undefined
  if (rf === undefined || rf === null || rf.type === 'text') return undefined
  if (rf.type === 'json_object') return { json_object: true }
  if (rf.type === 'json_schema') {
    return { json: (rf.json_schema as { schema?: unknown } | null | undefined)?.schema ?? null }
  }
  // Read as the legacy form when it has both lists, as the request check (`parseChatRequest`) reads it.
  const legacy = Array.isArray(rf.structures) && Array.isArray(rf.triggers)
  const fields = legacy
    ? {
        ...dump(rf, ['type', 'structures', 'triggers']),
        structures: (rf.structures as Record<string, unknown>[]).map((s) => dump(s, ['begin', 'schema', 'end'])),
      }
    : dump(rf, ['type', 'format'])
  return { structural_tag: pyJsonDumps(fields) }
}

/**
 * The 400 newest vLLM answers while serving when `response_format`, merged into `structured_outputs` as a new
 * `StructuredOutputsParams`, leaves not exactly one constraint kind (a second kind, or a json_schema format without a
 * schema and nothing else); undefined when the request's constraints are consistent. `structured_outputs` alone was
 * checked with the request (`parseChatRequest`).
 */
export function constraintConflict(r: ChatCompletionRequest): string | undefined {
  const so = r.structured_outputs
  const overrides = responseFormatConstraint(r)
  if ((so === undefined || so === null) && overrides === undefined) return undefined
  return constraintCountError(so ?? {}, overrides)
}

// The characters Python's `str.strip()` removes (`str.isspace`), which differ from JavaScript's `trim()`.
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python counts the separators U+001C–U+001F as spaces.
const PY_BLANK = /^[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/

// Newest vLLM's request content checks in `SamplingParams._validate_structured_outputs`, in its order, none naming a
// parameter. They read the params after `response_format` is merged in (`replace(structured_outputs, **overrides)`),
// so a format's schema replaces a blank `json` and its `json_object: true` a false one.
function checkStructuredOutputs(r: ChatCompletionRequest): void {
  const so = r.structured_outputs as Record<string, unknown> | null | undefined
  if (so === undefined || so === null) return
  const merged = { ...so, ...responseFormatConstraint(r) }
  if (Array.isArray(merged.choice) && merged.choice.length === 0) bad("Choice '[]' cannot be an empty list")
  if (typeof merged.grammar === 'string' && PY_BLANK.test(merged.grammar)) {
    bad('structured_outputs.grammar cannot be an empty string')
  }
  if (typeof merged.json === 'string' && PY_BLANK.test(merged.json)) {
    bad('structured_outputs.json cannot be an empty string')
  }
  if (merged.json_object === false) {
    bad('structured_outputs.json_object must be True if set; omit structured_outputs to disable structured outputs')
  }
  if (typeof merged.regex === 'string' && merged.regex.includes('\0')) {
    bad("structured_outputs.regex must not contain a NUL character ('\\x00')")
  }
}

function checkTemplate(r: ChatCompletionRequest, model: CatalogModel): void {
  const requestTemplate = r.chat_template ?? r.chat_template_kwargs?.chat_template
  if (requestTemplate !== undefined && requestTemplate !== null && !config.inference.trustRequestChatTemplate) {
    bad(
      'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.',
    )
  }
  const supplied = config.inference.trustRequestChatTemplate && typeof requestTemplate === 'string'
  if (model.hasChatTemplate === false && !supplied) {
    bad(
      'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.',
    )
  }
}

/**
 * vLLM's `TokenizeParams.__post_init__` as the chat protocol's `build_tok_params` fills it: the output budget
 * (`max_completion_tokens` when given, else `max_tokens`, else 0) may not exceed `max_model_len`, and
 * `truncate_prompt_tokens` may not exceed the room it leaves. Needs no tokenizer, so the gateway applies it to upstream
 * models too. Returns the output budget and the prompt room (`max_model_len` less that budget). vLLM's own spacing.
 */
export function checkTokenizeParams(r: ChatCompletionRequest, maxModelLen: number): { output: number; room: number } {
  const param =
    r.max_completion_tokens !== undefined && r.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens'
  const output = requestedMaxTokens(r) || 0
  if (output > maxModelLen) {
    bad(
      `${param}=${output}cannot be greater than max_model_len=max_total_tokens=${maxModelLen}. Please request fewer output tokens.`,
      param,
    )
  }
  const room = maxModelLen - output
  const truncate = r.truncate_prompt_tokens
  if (typeof truncate === 'number' && truncate > room) {
    bad(
      `truncate_prompt_tokens=${truncate} cannot be greater than max_model_len - ${param} = ${room}. Please request a smaller truncation size.`,
      'truncate_prompt_tokens',
    )
  }
  return { output, room }
}

/**
 * Applies the serving-time rules that need only the request and the catalog entry: priority scheduling, chat
 * templates, the chat layer's message rules, multimodal kwargs, truncation against the context window, token-id lists, structured outputs and the
 * sampling parameters' ranges. Throws `BadRequestError` with vLLM's message.
 */
export function checkServingRules(r: ChatCompletionRequest, model: CatalogModel): void {
  const priority = r.priority ?? 0
  if (priority !== 0 && model.scheduling !== 'priority') {
    bad(`Got priority ${priority} but Priority scheduling is not enabled.`, 'priority')
  }
  checkTemplate(r, model)
  checkMessages(r, model)
  if (r.mm_processor_kwargs !== undefined && r.mm_processor_kwargs !== null && !config.inference.trustRequestMmKwargs) {
    bad(
      'Per-request mm_processor_kwargs are disabled by default because they can change multimodal preprocessing resource usage. Start the server with --trust-request-mm-kwargs only when clients are trusted.',
    )
  }
  const maxModelLen = maxModelLenOf(model)
  if (maxModelLen !== null) checkTokenizeParams(r, maxModelLen)
  if (Array.isArray(r.allowed_token_ids) && r.allowed_token_ids.length === 0) {
    bad('allowed_token_ids is not None and empty!', 'allowed_token_ids')
  }
  const conflict = constraintConflict(r)
  if (conflict !== undefined) bad(conflict)
  checkStructuredOutputs(r)
  checkSampling(r)
}
