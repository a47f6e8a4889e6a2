// How a call's `summary.usage` is read, per model, by `trace/usage` and `calls/usage` (shared/tracing/usage.ts) and by
// the Console (console/src/lib/usage.ts), which counts traces itself: pure, so the browser bundle imports it too.
import { parsePythonInt } from '#shared/tracing/py-number'

/** The counts of one model's usage, as `trace/usage` answers them. */
export const USAGE_COUNTS = [
  'requests',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
] as const

/** The cost of each count, as `include_costs` adds them. */
export const USAGE_COSTS = [
  'prompt_tokens_total_cost',
  'completion_tokens_total_cost',
  'cache_read_input_tokens_total_cost',
  'cache_creation_input_tokens_total_cost',
] as const

/** One model's counts. */
export type UsageCounts = Record<(typeof USAGE_COUNTS)[number], number>

/** A JSON object (not an array, not null). */
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

// Weave's `usage_utils._safe_int`: `int(value)` (bools 1/0, floats truncated, integer strings as Python reads them:
// `"1_0"` 10, `" 7 "` 7, `"٣"` 3), and 0 for null and for what `int()` refuses (`"1.5"`, lists, objects).
function toInt(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : 0
  if (typeof v === 'string') return parsePythonInt(v) ?? 0
  return 0
}

/**
 * One model's recorded usage read as Weave's server reads it (docs/tracing.md §14.2 step 2): prompt =
 * `prompt_tokens + input_tokens`, completion = `completion_tokens + output_tokens`, total = their sum when
 * `total_tokens` is 0, every count as Python's int() takes it.
 */
export function readUsageCounts(raw: Record<string, unknown>): UsageCounts {
  const prompt = toInt(raw.prompt_tokens) + toInt(raw.input_tokens)
  const completion = toInt(raw.completion_tokens) + toInt(raw.output_tokens)
  const total = toInt(raw.total_tokens)
  return {
    requests: toInt(raw.requests),
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total === 0 ? prompt + completion : total,
    cache_read_input_tokens: toInt(raw.cache_read_input_tokens),
    cache_creation_input_tokens: toInt(raw.cache_creation_input_tokens),
  }
}
