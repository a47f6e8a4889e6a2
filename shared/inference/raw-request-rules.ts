import { pyRepr } from '#shared/errors/inference-errors'

// vLLM runs its request validators (`mode="before"`) on the raw JSON before field parsing, so they see absent and
// null differently and use Python truthiness (docs/inference.md §2, §3.1–3.7). The first failing rule is reported
// alone.

/** A request body as the raw-body rules read it. */
export type Raw = Record<string, unknown>

const CACHE_SALT_FORBIDDEN = /[@/\\\0]/

/** Python's truthiness of a parsed JSON value (`{}`, `[]`, `""`, `0`, `false` and null are false). */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false
  if (Array.isArray(value)) return value.length > 0
  if (typeof value === 'object') return Object.keys(value).length > 0
  return true
}

/** A raw-body rule's refusal: vLLM's message and the parameter it names. */
export class RuleError extends Error {
  constructor(
    message: string,
    readonly param: string | undefined,
  ) {
    super(message)
  }
}

/** Throws the `RuleError` of a refused rule. */
export function fail(message: string, param?: string): never {
  throw new RuleError(message, param)
}

function checkStreamOptions(raw: Raw): void {
  if (truthy(raw.stream_options) && !truthy(raw.stream)) {
    fail('Stream options can only be defined when `stream=True`.', 'stream_options')
  }
}

function checkLogprobs(raw: Raw): void {
  for (const field of ['prompt_logprobs', 'top_logprobs']) {
    const value = raw[field]
    if (value !== undefined && value !== null && typeof value !== 'number')
      fail(`\`${field}\` must be an integer.`, field)
  }
  const prompt = raw.prompt_logprobs as number | null | undefined
  if (prompt !== undefined && prompt !== null) {
    if (truthy(raw.stream) && (prompt > 0 || prompt === -1)) {
      fail('`prompt_logprobs` are not available when `stream=True`.', 'prompt_logprobs')
    }
    if (prompt < 0 && prompt !== -1) fail('`prompt_logprobs` must be a positive value or -1.', 'prompt_logprobs')
  }
  const top = raw.top_logprobs as number | null | undefined
  if (top !== undefined && top !== null) {
    if (top < 0 && top !== -1) fail('`top_logprobs` must be a positive value or -1.', 'top_logprobs')
    if ((top === -1 || top > 0) && !truthy(raw.logprobs)) {
      fail('when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs')
    }
  }
}

function isStructuralTag(value: unknown): boolean {
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value)
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    } catch {
      return false
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function checkStructuredOutputs(raw: Raw): void {
  const so = raw.structured_outputs
  if (so === undefined || so === null || typeof so !== 'object' || Array.isArray(so)) return
  const spec = so as Raw
  const kinds = ['json', 'regex', 'choice'].filter((k) => spec[k] !== undefined && spec[k] !== null).length
  // vLLM raises this one without a parameter, so its param is the location, `body`.
  if (kinds > 1) fail("You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').")
  if (spec.structural_tag !== undefined && spec.structural_tag !== null && !isStructuralTag(spec.structural_tag)) {
    fail('Invalid structured_outputs structural_tag specification.', 'structured_outputs')
  }
}

function checkResponseFormat(raw: Raw): void {
  const rf = raw.response_format as Raw | null | undefined
  if (rf === undefined || rf === null || typeof rf !== 'object') return
  if (rf.type === 'json_schema' && (rf.json_schema === undefined || rf.json_schema === null)) {
    fail("When response_format type is 'json_schema', the 'json_schema' field must be provided.", 'response_format')
  }
  if (rf.type === 'structural_tag') {
    const legacy = Array.isArray(rf.structures) && Array.isArray(rf.triggers)
    if (!legacy && (rf.format === undefined || rf.format === null)) {
      fail('Invalid response_format structural_tag specification.', 'response_format')
    }
  }
}

function checkTools(raw: Raw): void {
  if (Array.isArray(raw.tools) && raw.tools.length === 0) {
    fail('`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.', 'tools')
  }
  const choice = raw.tool_choice
  if (choice !== undefined && choice !== null && choice !== 'none') {
    const shown = typeof choice === 'string' ? choice : pyRepr(choice)
    fail(`Invalid value for \`tool_choice\`: ${shown}! Only "none" is supported.`, 'tool_choice')
  }
}

function checkGenerationPrompt(raw: Raw): void {
  if (truthy(raw.continue_final_message) && truthy(raw.add_generation_prompt)) {
    fail('Cannot set both `continue_final_message` and `add_generation_prompt` to True.', 'continue_final_message')
  }
}

function checkCacheSalt(raw: Raw): void {
  const salt = raw.cache_salt
  if (salt === undefined || salt === null) return
  if (typeof salt !== 'string' || salt === '') {
    fail("Parameter 'cache_salt' must be a non-empty string if provided.", 'cache_salt')
  }
  if (salt.length > 128 || CACHE_SALT_FORBIDDEN.test(salt)) {
    fail(
      "Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', '\\\\', or NUL.",
      'cache_salt',
    )
  }
}

/** vLLM's `mode="before"` request validators, in its order; each throws a `RuleError`. */
export const RAW_RULES: readonly ((raw: Raw) => void)[] = [
  checkStreamOptions,
  checkLogprobs,
  checkStructuredOutputs,
  checkResponseFormat,
  checkTools,
  checkGenerationPrompt,
  checkCacheSalt,
]
