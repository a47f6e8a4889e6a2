import { config } from '#shared/config'
import { maxModelLenOf } from '#shared/engine/settings'
import { BadRequestError } from '#shared/errors/http-error'
import { pyRepr } from '#shared/errors/inference-errors'
import { checkMessages } from '#shared/inference/message-rules'
import { type ChatCompletionRequest, requestedMaxTokens } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

// Rules vLLM raises while serving (docs/inference.md §3.8–3.11, plus `SamplingParams._verify_args`): answered as 400
// `BadRequestError`. The ones that need the tokenizer (prompt length, vocabulary) belong to the backend.

/** Formats a float field the way Python prints it (`-1` → `-1.0`), as vLLM's messages do. */
function pyFloat(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value)
}

function bad(message: string, param?: string): never {
  throw new BadRequestError(message, param === undefined ? {} : { param })
}

/** vLLM's bound on `n` (`VLLM_MAX_N_SEQUENCES`, default 16384), applied to every model. */
export const MAX_N_SEQUENCES = 16384

/** vLLM's message for an `n` above a bound (`_verify_num_sequences`); the reference engine uses it with its `maxN`. */
export function nTooLarge(n: number, max: number): never {
  // Python prints the int in full (a JSON 1.8e308 is an integral float, which pydantic takes as an int).
  const shown = Number.isSafeInteger(n) ? String(n) : BigInt(n).toString()
  bad(
    `n must be at most ${max}, got ${shown}. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.`,
    'n',
  )
}

/** vLLM samples greedily below this temperature (`_SAMPLING_EPS`). */
export const GREEDY_BELOW = 1e-5

/** vLLM's `_verify_greedy_sampling`: greedy sampling has one answer, so `n > 1` is refused (not for beam search). */
export function checkGreedyN(n: number, temperature: number, beamSearch: boolean): void {
  if (!beamSearch && temperature < GREEDY_BELOW && n > 1) bad(`n must be 1 when using greedy sampling, got ${n}.`)
}

function checkSampling(r: ChatCompletionRequest): void {
  if (r.n !== undefined && r.n !== null && r.n < 1) bad(`n must be at least 1, got ${r.n}.`, 'n')
  if (typeof r.n === 'number' && r.n > MAX_N_SEQUENCES) nTooLarge(r.n, MAX_N_SEQUENCES)
  for (const field of ['presence_penalty', 'frequency_penalty'] as const) {
    const v = r[field]
    if (typeof v === 'number' && (v < -2 || v > 2)) bad(`${field} must be in [-2, 2], got ${pyFloat(v)}.`, field)
  }
  const { repetition_penalty: rep, temperature: t, top_p: p, top_k: k, min_p: mp } = r
  if (typeof rep === 'number' && rep <= 0) {
    bad(`repetition_penalty must be greater than zero, got ${pyFloat(rep)}.`, 'repetition_penalty')
  }
  if (typeof t === 'number' && t < 0) bad(`temperature must be non-negative, got ${pyFloat(t)}.`, 'temperature')
  if (typeof p === 'number' && (p <= 0 || p > 1)) bad(`top_p must be in (0, 1], got ${pyFloat(p)}.`, 'top_p')
  // vLLM normalises -1 to 0 (disabled) before this check.
  if (typeof k === 'number' && k < -1) bad(`top_k must be 0 (disable), or at least 1, got ${k}.`, 'top_k')
  if (typeof mp === 'number' && (mp < 0 || mp > 1)) bad(`min_p must be in [0, 1], got ${pyFloat(mp)}.`, 'min_p')
  const max = requestedMaxTokens(r)
  if (max !== undefined && max < 1) bad(`max_tokens must be at least 1, got ${max}.`, 'max_tokens')
  const min = r.min_tokens
  if (min !== undefined && min < 0) bad(`min_tokens must be greater than or equal to 0, got ${min}.`, 'min_tokens')
  if (min !== undefined && max !== undefined && min > max) {
    bad(`min_tokens must be less than or equal to max_tokens=${max}, got ${min}.`, 'min_tokens')
  }
  const stops = typeof r.stop === 'string' ? [r.stop] : (r.stop ?? [])
  if (stops.some((s) => s === '')) bad('stop cannot contain an empty string.', 'stop')
  const badWords = r.bad_words ?? []
  if (badWords.includes('')) {
    // vLLM drops duplicates (`dict.fromkeys`) before it checks, so the message lists each word once.
    bad(`bad_words cannot contain an empty string. Got bad_words=${pyRepr([...new Set(badWords)])}`)
  }
  // Only a temperature the request sets is known here; a model's generation config is the backend's to apply.
  if (typeof t === 'number') checkGreedyN(r.n ?? 1, t, r.use_beam_search === true)
}

// The fields of vLLM's `StructuredOutputsParams`, in declaration order, as its `__dict__` lists them.
const STRUCTURED_OUTPUT_FIELDS = {
  json: null,
  regex: null,
  choice: null,
  grammar: null,
  json_object: null,
  disable_any_whitespace: false,
  disable_additional_properties: false,
  whitespace_pattern: null,
  structural_tag: null,
} as const
const CONSTRAINTS = ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const

// Newest vLLM turns a `json_schema` response format into `structured_outputs.json = <schema>`; without a schema no
// constraint is left, and `StructuredOutputsParams` refuses that, printing its fields.
function checkSchemaless(r: ChatCompletionRequest): void {
  const rf = r.response_format
  if (rf?.type !== 'json_schema') return
  const schema = (rf as { json_schema?: { schema?: unknown } | null }).json_schema?.schema
  if (schema !== undefined && schema !== null) return
  const fields: Record<string, unknown> = { ...STRUCTURED_OUTPUT_FIELDS }
  const so = (r.structured_outputs ?? {}) as Record<string, unknown>
  for (const key of Object.keys(fields)) if (so[key] !== undefined) fields[key] = so[key]
  fields.json = null
  if (CONSTRAINTS.some((k) => fields[k] !== null && fields[k] !== undefined)) return
  const dict = { ...fields, _backend: null, _backend_was_auto: false }
  bad(`You must use one kind of structured outputs constraint but none are specified: ${pyRepr(dict)}`)
}

function checkStructuredOutputs(r: ChatCompletionRequest): void {
  const so = r.structured_outputs as Record<string, unknown> | null | undefined
  if (so === undefined || so === null) return
  if (Array.isArray(so.choice) && so.choice.length === 0) bad("Choice '[]' cannot be an empty list")
  if (typeof so.grammar === 'string' && so.grammar.trim() === '') {
    bad('structured_outputs.grammar cannot be an empty string')
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
  const truncate = r.truncate_prompt_tokens
  const maxModelLen = maxModelLenOf(model)
  if (typeof truncate === 'number' && maxModelLen !== null && truncate > maxModelLen) {
    bad('truncate_prompt_tokens value is greater than max_model_len. Please, select a smaller truncation size.')
  }
  if (Array.isArray(r.allowed_token_ids) && r.allowed_token_ids.length === 0) {
    bad('allowed_token_ids is not None and empty!')
  }
  checkStructuredOutputs(r)
  checkSchemaless(r)
  checkSampling(r)
}
