import type { CancelSignal } from '#shared/inference/cancellation'
import type { ChunkJson } from '#shared/inference/chunk-json'
import type {
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionResponse,
  ChatUsage,
} from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

/**
 * One completion handed to a backend. The gateway has already validated the request (schema and the contract's
 * request rules), resolved the model in the catalog, checked `priority` against the model's scheduling and the chat
 * template rule; the backend owns everything that needs the tokenizer or the engine (context length, token ids,
 * logprob limits, template rendering) and reports those as thrown `HttpError`s (`BadRequestError` with `param`).
 */
export type ChatBackendCall = {
  /** The validated request; absent fields keep the contract's defaults (see `CHAT_DEFAULTS`). */
  request: ChatCompletionRequest
  /** The catalog entry; `model.id` is the served name that goes into `model` of every body and chunk. */
  model: CatalogModel
  /** The response id is `chatcmpl-${requestId}` (docs/inference.md §1). */
  requestId: string
  /** Unix seconds for `created`, the same for every chunk of a stream. */
  created: number
  /** Aborted when the client disconnects or the gateway gives up; a backend stops generating and releases resources. */
  signal: CancelSignal
  /**
   * What the backend learned of the prompt before it answered, set by the backend as it learns it, for metering a
   * completion cut short before its usage: the exact prompt tokens once it tokenized the prompt, and
   * `prompt_tokens_details` (its cached tokens) once the request was scheduled, null when the model reports none. The
   * reference engine sets it; an upstream backend cannot, and its aborted requests keep the estimated prompt
   * (shared/inference/usage-meter.ts, `promptOf`) and no cached tokens.
   */
  known?: KnownPrompt
}

/** The prompt usage a backend knows before its answer (`ChatBackendCall.known`). */
export type KnownPrompt = Pick<ChatUsage, 'prompt_tokens' | 'prompt_tokens_details'>

/**
 * The chunks one upstream read delivered, handed to the gateway together: it frames them into one write. `json[i]`,
 * when set, is chunk i's JSON as the upstream wrote it with the gateway's `id` and `model` in place, which framing
 * sends instead of serialising the chunk again (it must parse to a value equal to the chunk). `complete`: the upstream
 * has sent its `[DONE]`, so the stream is about to end.
 */
export type ChunkBatch = {
  chunks: ChatCompletionChunk[]
  json: (ChunkJson | undefined)[]
  complete: boolean
}

/**
 * A way of serving chat completions (an upstream OpenAI-compatible server, the built-in reference engine).
 *
 * Errors are thrown as `HttpError` subclasses from `#shared/errors/http-error`: before the first chunk they become a
 * normal JSON error response; after it, an in-stream `data: {"error": ...}` event followed by `data: [DONE]`.
 *
 * Streams: yield the chunk sequence of docs/inference.md §6.2: role chunk(s), deltas, one finish chunk per choice,
 * and always a final usage chunk (`choices: []`, `usage` summed over choices) even when the client did not ask for
 * usage: the gateway meters it and drops it when `stream_options.include_usage` is not set. A backend may put
 * cumulative `usage` on every chunk (continuous usage); the gateway keeps it only when `continuous_usage_stats` was
 * asked for, and uses it to meter streams that were aborted. The gateway does the SSE framing and the final
 * `data: [DONE]`.
 */
export type ChatBackend = {
  /** Runs a non-streaming completion and returns the response body (docs/inference.md §5). */
  complete(call: ChatBackendCall): Promise<ChatCompletionResponse>
  /** Runs a streaming completion; the gateway stops iterating (and aborts `signal`) when the client goes away. */
  stream(call: ChatBackendCall): AsyncIterable<ChatCompletionChunk>
  /**
   * The same stream as `stream`, a batch per upstream read: a backend that reads chunks in bulk offers it, and the
   * gateway then uses it instead of `stream` (one hand-over per read rather than per chunk).
   */
  streamBatches?(call: ChatBackendCall): AsyncIterable<ChunkBatch>
}
