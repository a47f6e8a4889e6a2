import { safeParse } from 'zod/mini'
import { RequestValidationError, type ValidationIssue } from '#shared/errors/http-error'
import { pyRepr } from '#shared/errors/inference-errors'
import { toValidationIssues } from '#shared/errors/validation-issues'
import { fail, RAW_RULES, type Raw, RuleError } from '#shared/inference/raw-request-rules'
import { type ChatCompletionRequest, ChatCompletionRequestSchema } from '#shared/schemas/chat-completion'
import { presentFieldsParse } from '#shared/schemas/present-fields'

const LONG_MIN = -(2 ** 63)
// The contract's upper bound is 2^63−1, but JSON.parse reads 9223372036854775807 as the double 2^63 (doubles are
// 1,024 apart there), so values that round to 2^63 are accepted: the bound itself must pass, and 2^63 … 2^63+1,024,
// which Python would refuse, cannot be told from it. The next double, 2^63+2,048, and anything larger is refused.
// The upstream gets 2^63 back as the bound's digits (upstream-body.ts `upstreamBody`).
const LONG_MAX = 2 ** 63
const LONG_MAX_TEXT = '9223372036854775807'
const LONG_MIN_TEXT = '-9223372036854775808'

function rangeIssue(field: string, value: number, min: number, minText: string): ValidationIssue | undefined {
  if (value < min) {
    return {
      type: 'greater_than_equal',
      loc: ['body', field],
      msg: `Input should be greater than or equal to ${minText}`,
      input: value,
      ctx: { ge: min },
    }
  }
  if (value > LONG_MAX) {
    return {
      type: 'less_than_equal',
      loc: ['body', field],
      msg: `Input should be less than or equal to ${LONG_MAX_TEXT}`,
      input: value,
      ctx: { le: Number(LONG_MAX_TEXT) },
    }
  }
  return undefined
}

// vLLM's `StructuredOutputsParams` fields with their defaults, in declaration order: the order of the `__dict__` its
// `__post_init__` errors print, which ends with `_backend` and `_backend_was_auto` (set later by the engine).
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
const CONSTRAINT_KINDS = ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const

/**
 * The error of vLLM's `StructuredOutputsParams.__post_init__` for the parsed `structured_outputs` fields with
 * `overrides` applied (what `response_format` sets while serving): not exactly one constraint kind set (not None, so
 * `json_object: false` counts). Undefined when exactly one is set.
 */
export function constraintCountError(
  structuredOutputs: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): string | undefined {
  const fields: Record<string, unknown> = { ...STRUCTURED_OUTPUT_FIELDS }
  for (const key of Object.keys(fields)) {
    const value = key in overrides ? overrides[key] : structuredOutputs[key]
    if (value !== undefined) fields[key] = value
  }
  const count = CONSTRAINT_KINDS.filter((k) => fields[k] !== null).length
  if (count === 1) return undefined
  const dict = pyRepr({ ...fields, _backend: null, _backend_was_auto: false })
  return count > 1
    ? `You can only use one kind of structured outputs constraint but multiple are specified: ${dict}`
    : `You must use one kind of structured outputs constraint but none are specified: ${dict}`
}

// `structured_outputs` is typed `StructuredOutputsParams`, a pydantic dataclass: its `__post_init__` raises while the
// field is parsed, so the error is pydantic's, at the field's location, and carries no parameter.
function structuredOutputsIssue(request: ChatCompletionRequest, raw: unknown): ValidationIssue | undefined {
  const so = request.structured_outputs
  if (so === undefined || so === null) return undefined
  const message = constraintCountError(so)
  if (message === undefined) return undefined
  return {
    type: 'value_error',
    loc: ['body', 'structured_outputs'],
    msg: `Value error, ${message}`,
    input: raw,
    ctx: { error: message },
  }
}

// In the order of vLLM's field declarations, which pydantic's errors follow.
function fieldIssues(request: ChatCompletionRequest, body: unknown): ValidationIssue[] {
  const issues: (ValidationIssue | undefined)[] = []
  if (typeof request.seed === 'number') issues.push(rangeIssue('seed', request.seed, LONG_MIN, LONG_MIN_TEXT))
  if (typeof request.truncate_prompt_tokens === 'number') {
    issues.push(rangeIssue('truncate_prompt_tokens', request.truncate_prompt_tokens, -1, '-1'))
  }
  issues.push(structuredOutputsIssue(request, (body as Raw).structured_outputs))
  if (typeof request.priority === 'number') {
    issues.push(rangeIssue('priority', request.priority, LONG_MIN, LONG_MIN_TEXT))
  }
  return issues.filter((i) => i !== undefined)
}

/** vLLM's `repetition_detection` rules (docs/inference.md §8), shared by the gateway and the reference engine. */
export function checkRepetitionDetection(request: ChatCompletionRequest): void {
  const rd = request.repetition_detection
  if (rd === undefined || rd === null) return
  const max = rd.max_pattern_size ?? 0
  const min = rd.min_pattern_size ?? 0
  const count = rd.min_count ?? 0
  if (max < 0 || min < 0 || count < 0 || min > max) {
    fail(
      'max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. Set both to 0 to disable repetitive pattern detection.',
      'repetition_detection',
    )
  }
  if (max > 0 && count < 2) {
    fail(
      'min_count must be >= 2 to detect repetitive patterns in engine output. If you do not wish to detect repetitive patterns, set max_pattern_size to 0.',
      'repetition_detection',
    )
  }
}

function ruleIssue(error: RuleError, input: unknown, loc: (string | number)[] = ['body']): RequestValidationError {
  const issue: ValidationIssue = {
    type: 'value_error',
    loc,
    msg: `Value error, ${error.message}`,
    input,
    ctx: { error: error.message },
  }
  return new RequestValidationError([issue], error.param === undefined ? {} : { param: error.param })
}

/**
 * vLLM's request-validation 400 for a structural tag its xgrammar check refuses (`validate_structural_tag_payload`):
 * `Invalid response_format structural_tag specification.` or the `structured_outputs` one, named by the field that
 * carried the tag. The reference engine raises it for what only its compiler can tell (docs/inference.md §3.4).
 */
export function invalidStructuralTagError(
  field: 'response_format' | 'structured_outputs',
  input: unknown,
  cause?: unknown,
): RequestValidationError {
  const error = ruleIssue(new RuleError(`Invalid ${field} structural_tag specification.`, field), input)
  if (cause !== undefined) error.cause = cause
  return error
}

/**
 * Validates a parsed JSON body as a chat-completion request: the contract's raw-body rules first (their messages
 * exactly), then field types and ranges. Throws `RequestValidationError` (rendered as vLLM's 400) on the first
 * failing rule, or with every field error.
 */
export function parseChatRequest(body: unknown): ChatCompletionRequest {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    try {
      for (const rule of RAW_RULES) rule(body as Raw)
    } catch (error) {
      if (error instanceof RuleError) throw ruleIssue(error, body)
      throw error
    }
  }
  const request = parsePresentFields(body) ?? parseFields(body)
  const issues = fieldIssues(request, body)
  if (issues.length > 0) throw new RequestValidationError(issues)
  try {
    checkRepetitionDetection(request)
  } catch (error) {
    if (error instanceof RuleError) {
      throw ruleIssue(error, request.repetition_detection, ['body', 'repetition_detection'])
    }
    throw error
  }
  return request
}

// Valid requests are parsed field by field (only the fields they set); anything else gets zod's full parse, whose
// issues are the answer's.
const parsePresentFields = presentFieldsParse(ChatCompletionRequestSchema)

function parseFields(body: unknown): ChatCompletionRequest {
  const parsed = safeParse(ChatCompletionRequestSchema, body, { reportInput: true })
  if (!parsed.success) throw new RequestValidationError(toValidationIssues(parsed.error.issues, ['body']))
  return parsed.data
}
