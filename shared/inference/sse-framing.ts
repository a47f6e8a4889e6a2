import { inferenceErrorResponse } from '#shared/errors/inference-errors'
import type { ChatCompletionChunk } from '#shared/schemas/chat-completion'

// The SSE framing of a chat-completion stream (docs/inference.md §6): each event is `data: <json>\n\n`, heartbeats are
// SSE comments, the stream ends with `data: [DONE]`.

const encoder = new TextEncoder()
/** The stream's last event. */
export const DONE = encoder.encode('data: [DONE]\n\n')
/** A comment event that keeps proxies from closing an idle connection before the first chunk. */
export const HEARTBEAT = encoder.encode(': keep-alive\n\n')

/** UTF-8 bytes of framed events. */
export const encodeEvents = (text: string): Uint8Array => encoder.encode(text)

/** Which usage the client asked for (`stream_options`). */
export type UsageFraming = {
  /** `include_usage`: a final usage chunk is sent. */
  includeUsage: boolean
  /** `continuous_usage_stats` (with `include_usage`): every chunk keeps its usage. */
  continuous: boolean
}

function withoutNulls<T extends object>(value: T): T {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = v
  return out as T
}

/**
 * One backend chunk as the event the client gets, or undefined when it gets none: the upstream's usage chunk only
 * with `include_usage` (its nulls dropped); a content chunk keeps its usage only with continuous stats, and a role
 * chunk always carries `prompt_token_ids` (null without `return_token_ids`, docs/inference.md §6.2). Edits the chunk in
 * place.
 */
export function frameChunk(chunk: ChatCompletionChunk, framing: UsageFraming): string | undefined {
  if (chunk.choices.length === 0 && chunk.usage) {
    if (!framing.includeUsage) return undefined
    return `data: ${JSON.stringify(withoutNulls({ ...chunk, usage: withoutNulls(chunk.usage) }))}\n\n`
  }
  if (chunk.choices[0]?.delta.role !== undefined && chunk.prompt_token_ids === undefined) chunk.prompt_token_ids = null
  if (chunk.usage !== undefined && !framing.continuous) delete chunk.usage
  return `data: ${JSON.stringify(chunk)}\n\n`
}

/**
 * The usage chunk the gateway writes itself when the client asked for usage and the upstream sent none (a hosted API
 * that ignores `stream_options`): the metered counts under the last chunk's id, created and model
 * (docs/inference.md §6.2 step 4).
 */
export function usageEvent(
  last: Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'>,
  counts: { prompt_tokens: number; completion_tokens: number },
): string {
  const { prompt_tokens, completion_tokens } = counts
  const usage = { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens }
  const chunk = { id: last.id, object: last.object, created: last.created, model: last.model, choices: [], usage }
  return `data: ${JSON.stringify(chunk)}\n\n`
}

/** An in-stream error event: the family's error body, as a failure after the 200 was sent must be reported. */
export function errorEvent(error: unknown): string {
  return `data: ${JSON.stringify(inferenceErrorResponse(error).body)}\n\n`
}
