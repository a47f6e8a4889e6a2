import { estimateCompletionTokens, estimatePromptTokens } from '#shared/inference/usage-meter'
import type { ChatCompletionRequest, ChatCompletionResponse, ChatUsage } from '#shared/schemas/chat-completion'

// An upstream's JSON answer brought to the contract's shape before the gateway answers and meters it.

const TOP_LEVEL_NULLS = [
  'service_tier',
  'system_fingerprint',
  'prompt_logprobs',
  'prompt_token_ids',
  'kv_transfer_params',
]
const CHOICE_NULLS = ['logprobs', 'stop_reason', 'token_ids']
const MESSAGE_NULLS = ['refusal', 'annotations', 'audio', 'function_call', 'reasoning']

function fillNulls(target: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of keys) if (target[key] === undefined) target[key] = null
}

/**
 * Brings an upstream body to the contract's shape (docs/inference.md §5): every key present, nulls included (hosted
 * upstreams leave vLLM's extras out, `usage.prompt_tokens_details` among them), and no `tool_calls` list, which is
 * always empty with `tool_choice: "none"` (newest vLLM omits it).
 */
export function normalizeResponse(body: ChatCompletionResponse): ChatCompletionResponse {
  fillNulls(body as unknown as Record<string, unknown>, TOP_LEVEL_NULLS)
  if (body.usage && body.usage.prompt_tokens_details === undefined) body.usage.prompt_tokens_details = null
  for (const choice of body.choices ?? []) {
    fillNulls(choice as unknown as Record<string, unknown>, CHOICE_NULLS)
    const message = choice.message as unknown as Record<string, unknown> | undefined
    if (message === undefined) continue
    fillNulls(message, MESSAGE_NULLS)
    if (Array.isArray(message.tool_calls) && message.tool_calls.length === 0) {
      // A copy without the key rather than `delete`, which leaves the object in V8's slow dictionary mode (and its
      // serialisation slower); the keys keep their order.
      const { tool_calls: _empty, ...rest } = message
      choice.message = rest as unknown as typeof choice.message
    }
  }
  return body
}

/**
 * Gives a body whose upstream left `usage` out (or its counts) estimated counts: the completion is answered and
 * metered with them, the same numbers in both (docs/architecture.md, Metering), rather than failing a reply the
 * gateway already holds.
 */
export function ensureUsage(body: ChatCompletionResponse, request: ChatCompletionRequest): void {
  const usage = body.usage as Partial<ChatUsage> | null | undefined
  const prompt = usage?.prompt_tokens
  const completion = usage?.completion_tokens
  if (typeof prompt === 'number' && typeof completion === 'number') return
  const promptTokens = typeof prompt === 'number' ? prompt : estimatePromptTokens(request)
  const completionTokens =
    typeof completion === 'number'
      ? completion
      : estimateCompletionTokens(Array.isArray(body.choices) ? body.choices : [])
  body.usage = {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: usage?.prompt_tokens_details ?? null,
  }
}
