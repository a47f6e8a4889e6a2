import { inferenceErrorResponse } from '#shared/errors/inference-errors'
import type { ChunkJson } from '#shared/inference/chunk-json'
import type { ChatCompletionChunk } from '#shared/schemas/chat-completion'

// The SSE framing of a chat-completion stream (docs/inference.md §6): each event is `data: <json>\n\n`, heartbeats are
// SSE comments, the stream ends with `data: [DONE]`.

const encoder = new TextEncoder()
/** The stream's last event. */
export const DONE_EVENT = 'data: [DONE]\n\n'
/** A comment event that keeps proxies from closing an idle connection before the first chunk. */
export const HEARTBEAT_EVENT = ': keep-alive\n\n'
/** `DONE_EVENT` as bytes. */
export const DONE = encoder.encode(DONE_EVENT)
/** `HEARTBEAT_EVENT` as bytes. */
export const HEARTBEAT = encoder.encode(HEARTBEAT_EVENT)

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
 * place. With `json` (the chunk's own JSON text, chunk-json.ts) the event is that text with the same edits made to it,
 * instead of the chunk serialised again.
 */
export function frameChunk(chunk: ChatCompletionChunk, framing: UsageFraming, json?: ChunkJson): string | undefined {
  if (chunk.choices.length === 0 && chunk.usage) {
    if (!framing.includeUsage) return undefined
    return `data: ${JSON.stringify(withoutNulls({ ...chunk, usage: withoutNulls(chunk.usage) }))}\n\n`
  }
  const addIds = chunk.choices[0]?.delta.role !== undefined && chunk.prompt_token_ids === undefined
  if (addIds) chunk.prompt_token_ids = null
  const dropUsage = chunk.usage !== undefined && !framing.continuous
  if (dropUsage) delete chunk.usage
  if (json === undefined || (dropUsage && json.usageStart < 0)) return `data: ${JSON.stringify(chunk)}\n\n`
  let text = json.text
  if (dropUsage) text = text.slice(0, json.usageStart) + text.slice(json.usageEnd)
  // Where serialising would put the key set above: last.
  if (addIds) text = `${text.slice(0, -1)},"prompt_token_ids":null}`
  return `data: ${text}\n\n`
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
