import type { ChatBackendCall } from '#shared/inference/backend'
import { ChatCompletionRequestSchema } from '#shared/schemas/chat-completion'
import type { OpenAiCompatibleSettings } from '#shared/schemas/model'

// Only the contract's fields are forwarded: unknown fields are ignored (docs/inference.md §2), and hosted upstreams
// reject names they do not know.
const KNOWN_FIELDS = new Set(Object.keys(ChatCompletionRequestSchema.shape))
// Integer fields bounded by 2^63−1: JSON.parse reads that bound as the double 2^63 (accepted in validate-request.ts),
// which JSON.stringify would write as 9223372036854776000, a value vLLM refuses. They go out as the bound's digits.
const LONG_FIELDS = ['seed', 'priority', 'truncate_prompt_tokens'] as const
const ROUNDED_LONG_MAX = 2 ** 63
const LONG_MAX_TEXT = '9223372036854775807'

/** The upstream request body: the client's known fields, the upstream's model name, usage always on for streams. */
export function upstreamBody(call: ChatBackendCall, settings: OpenAiCompatibleSettings, stream: boolean): string {
  const source = call.request as Record<string, unknown>
  const body: Record<string, unknown> = {}
  for (const key in source) {
    const value = source[key]
    if (value !== undefined && KNOWN_FIELDS.has(key)) body[key] = value
  }
  body.model = settings.upstreamModel ?? call.model.id
  if (body.engine_xargs !== undefined) {
    body.vllm_xargs = body.engine_xargs
    delete body.engine_xargs
  }
  body.stream = stream
  // Tool calling stays off (docs/inference.md §3.5): with `tools` and no `tool_choice`, vLLM would choose "auto".
  if (body.tools != null && body.tool_choice == null) body.tool_choice = 'none'
  if (stream) {
    // Usage is metered even when the client did not ask for it; the gateway drops what the client did not ask for.
    // Continuous stats (on every chunk) are what lets a stream cut short be metered with its real prompt tokens, so
    // they are asked for unless the catalog says the upstream rejects them (`continuousUsage: false`).
    const continuous =
      call.request.stream_options?.continuous_usage_stats === true || settings.continuousUsage !== false
    body.stream_options = continuous ? { include_usage: true, continuous_usage_stats: true } : { include_usage: true }
  } else {
    delete body.stream_options
  }
  let exact = ''
  for (const key of LONG_FIELDS) {
    if (body[key] !== ROUNDED_LONG_MAX) continue
    delete body[key]
    exact += `,"${key}":${LONG_MAX_TEXT}`
  }
  const text = JSON.stringify(body)
  // `body` always holds `model` and `stream`, so the fields join the object before its closing brace.
  return exact === '' ? text : `${text.slice(0, -1)}${exact}}`
}
