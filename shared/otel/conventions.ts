import { type AttrTree, attributeAt, parseJsonText } from '#shared/otel/attribute-tree'
import type { AttrValue } from '#shared/otel/otlp-model'

/**
 * Which span attributes become a call's inputs, output, usage and attributes, after the reference
 * (`weave/trace_server/opentelemetry/constants.py`, `attributes.py`, `event_parser.py` in wandb/weave). In each list
 * the first key that holds a value wins, so the order is the priority: Weave's own `weave.*` names first, then the
 * OpenTelemetry GenAI semantic conventions (`gen_ai.*`), OpenLLMetry/Traceloop, OpenInference, Vercel AI SDK, MLflow,
 * and generic names last. docs/otel.md has the table.
 */

/** Inputs: the first key found, stored under its own name (`{"input.value": …}`). */
export const INPUT_KEYS = [
  'weave.input.messages',
  'gen_ai.input.messages',
  'gen_ai.prompt',
  'input.value',
  'mlflow.spanInputs',
  'ai.prompt',
  'traceloop.entity.input',
  'input',
  'inputs',
] as const

/** Output: the first key found, stored under its own name (`{"output.value": …}`). */
export const OUTPUT_KEYS = [
  'weave.output.messages',
  'gen_ai.output.messages',
  'gen_ai.completion',
  'output.value',
  'gen_ai.content.completion',
  'mlflow.spanOutputs',
  'ai.response',
  'traceloop.entity.output',
  'output',
  'outputs',
] as const

/** Token counts, by Weave's usage field. */
export const USAGE_KEYS: Record<string, readonly string[]> = {
  input_tokens: ['weave.usage.input_tokens', 'gen_ai.usage.input_tokens'],
  output_tokens: ['weave.usage.output_tokens', 'gen_ai.usage.output_tokens'],
  prompt_tokens: [
    'gen_ai.usage.prompt_tokens',
    'llm.usage.prompt_tokens',
    'llm.token_count.prompt',
    'ai.usage.promptTokens',
  ],
  completion_tokens: [
    'gen_ai.usage.completion_tokens',
    'llm.usage.completion_tokens',
    'llm.token_count.completion',
    'ai.usage.completionTokens',
  ],
  total_tokens: [
    'weave.usage.total_tokens',
    'gen_ai.usage.total_tokens',
    'llm.usage.total_tokens',
    'llm.token_count.total',
  ],
  cache_read_input_tokens: [
    'weave.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read_input_tokens',
    'llm.token_count.prompt_details.cache_read',
  ],
  cache_creation_input_tokens: [
    'weave.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_creation_input_tokens',
    'llm.token_count.prompt_details.cache_write',
  ],
}

/** Call attributes Weave shows for LLM spans, by their name in the call. */
export const ATTRIBUTE_KEYS: Record<string, readonly string[]> = {
  system: ['weave.system_instructions', 'gen_ai.system_instructions', 'gen_ai.system', 'llm.system'],
  kind: ['weave.span.kind', 'traceloop.span.kind', 'openinference.span.kind'],
  model: [
    'weave.response.model',
    'gen_ai.response.model',
    'weave.request.model',
    'gen_ai.request.model',
    'llm.model_name',
    'ai.model.id',
  ],
  provider: ['weave.provider.name', 'gen_ai.provider.name', 'llm.provider', 'ai.model.provider'],
  model_parameters: ['gen_ai.request', 'llm.invocation_parameters'],
  operation_name: ['weave.operation.name', 'gen_ai.operation.name'],
  response_id: ['weave.response.id', 'gen_ai.response.id'],
  finish_reasons: ['weave.response.finish_reasons', 'gen_ai.response.finish_reasons'],
  agent_name: ['weave.agent.name', 'gen_ai.agent.name'],
  agent_id: ['weave.agent.id', 'gen_ai.agent.id'],
}

/** Call fields set from W&B attributes (`wandb.*`), conversation ids included. */
export const WANDB_KEYS = {
  display_name: ['wandb.display_name', 'weave.display_name'],
  thread_id: ['weave.conversation.id', 'gen_ai.conversation.id', 'wandb.thread_id'],
  is_turn: ['wandb.is_turn'],
  attributes: ['wandb.attributes'],
} as const

/** Attributes some SDKs (Langfuse) use for the real start and end of a span. */
export const TIME_OVERRIDE_KEYS = { start: ['langfuse.startTime'], end: ['langfuse.endTime'] } as const

// What counts as "found": the reference skips empty and falsy values (`if value:`).
const present = (v: AttrValue | undefined): v is AttrValue =>
  v !== undefined &&
  v !== null &&
  v !== '' &&
  v !== false &&
  v !== 0 &&
  !(Array.isArray(v) && v.length === 0) &&
  !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0)

/** The first key of `keys` with a value in the tree, and that value. */
export function firstOf(tree: AttrTree, keys: readonly string[]): [string, AttrValue] | undefined {
  for (const key of keys) {
    const value = attributeAt(tree, key)
    if (present(value)) return [key, value]
  }
  return undefined
}

/**
 * A value given as JSON text (messages, `input.value` of `application/json`) as JSON; anything else as it is. As
 * Weave's `expand_attributes`, only text whose first character is `{` or `[` is JSON: with leading whitespace it stays
 * text, here as in the attributes.
 */
export const jsonValue = (v: AttrValue): AttrValue =>
  typeof v === 'string' && (v[0] === '{' || v[0] === '[') ? (parseJsonText(v) ?? v) : v

// Text Python's `int()` reads (Weave's `try_parse_int`): a sign, digits with single underscores between them, spaces.
const INT_TEXT_RE = /^\s*[+-]?\d+(?:_\d+)*\s*$/
// Decimal text `int()` refuses and pydantic later reads when the fraction is zeros (`12.0`, `12.`); `12.7` it refuses.
const DECIMAL_TEXT_RE = /^\s*[+-]?\d+\.\d*\s*$/

/**
 * A token count as Weave reads it (`try_parse_int`, then its `int` usage fields): a number, truncated (`int(12.7)` is
 * 12); integer text (`"12"`, `"+1_000"`); decimal text, truncated. `integer` says whether Weave held an `int` when
 * it derived `total_tokens`, which decimal text is not. Undefined for anything else.
 */
export function tokenCount(v: AttrValue): { count: number; integer: boolean } | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? { count: Math.trunc(v), integer: true } : undefined
  if (typeof v !== 'string') return undefined
  if (INT_TEXT_RE.test(v)) return { count: Number(v.replaceAll('_', '')), integer: true }
  // Weave's schema refuses `12.7`, failing the whole export; Loom keeps the whole part (docs/otel.md).
  return DECIMAL_TEXT_RE.test(v) ? { count: Math.trunc(Number(v)), integer: false } : undefined
}

/**
 * Token usage in Weave's `LLMUsageSchema` keys. `total_tokens`, when not sent, is derived as Weave's `get_weave_usage`
 * does: `prompt_tokens + completion_tokens`, else `input_tokens + output_tokens`, never from a mixed pair, and only
 * from counts Weave held as integers.
 */
export function usageOf(tree: AttrTree): Record<string, number> {
  const usage: Record<string, number> = {}
  const integers = new Set<string>()
  for (const [name, keys] of Object.entries(USAGE_KEYS)) {
    const found = firstOf(tree, keys)
    const n = found === undefined ? undefined : tokenCount(found[1])
    if (n === undefined) continue
    usage[name] = n.count
    if (n.integer) integers.add(name)
  }
  for (const [a, b] of [
    ['prompt_tokens', 'completion_tokens'],
    ['input_tokens', 'output_tokens'],
  ] as const) {
    if (usage.total_tokens !== undefined) break
    const x = usage[a]
    const y = usage[b]
    if (x !== undefined && y !== undefined && integers.has(a) && integers.has(b)) usage.total_tokens = x + y
  }
  return usage
}

/** The Weave attributes found (`model`, `provider`, `kind`, …); `model_parameters` given as JSON text is parsed. */
export function weaveAttributesOf(tree: AttrTree): Record<string, AttrValue> {
  const attributes: Record<string, AttrValue> = {}
  for (const [name, keys] of Object.entries(ATTRIBUTE_KEYS)) {
    const found = firstOf(tree, keys)
    if (found !== undefined) attributes[name] = name === 'model_parameters' ? jsonValue(found[1]) : found[1]
  }
  return attributes
}
