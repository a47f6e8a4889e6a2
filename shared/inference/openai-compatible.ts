import { config } from '#shared/config'
import type { ChatBackend, ChatBackendCall, ChunkBatch } from '#shared/inference/backend'
import { rewriteChunkJson } from '#shared/inference/chunk-json'
import { ChunkTemplate } from '#shared/inference/chunk-template'
import { resolveCredential } from '#shared/inference/credentials'
import {
  postUpstream,
  UpstreamError,
  type UpstreamResponse,
  upstreamEndpoint,
  upstreamError,
} from '#shared/inference/upstream-http'
import { estimateCompletionTokens, estimatePromptTokens } from '#shared/inference/usage-meter'
import {
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  ChatCompletionRequestSchema,
  type ChatCompletionResponse,
  type ChatUsage,
} from '#shared/schemas/chat-completion'
import type { OpenAiCompatibleSettings } from '#shared/schemas/model'

// Only the contract's fields are forwarded: unknown fields are ignored (docs/inference.md §2), and hosted upstreams
// reject names they do not know.
const KNOWN_FIELDS = new Set(Object.keys(ChatCompletionRequestSchema.shape))
const INTERNAL_ERROR = 'The server had an error while processing your request'
// Integer fields bounded by 2^63−1: JSON.parse reads that bound as the double 2^63 (accepted in validate-request.ts),
// which JSON.stringify would write as 9223372036854776000, a value vLLM refuses. They go out as the bound's digits.
const LONG_FIELDS = ['seed', 'priority', 'truncate_prompt_tokens'] as const
const ROUNDED_LONG_MAX = 2 ** 63
const LONG_MAX_TEXT = '9223372036854775807'

function settingsOf(call: ChatBackendCall): OpenAiCompatibleSettings {
  if (call.model.backend.kind !== 'openai-compatible')
    throw new Error(`model ${call.model.id} is not openai-compatible`)
  return call.model.backend
}

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

// The id may come from the body's `request_id`, which is any string: only a short printable-ASCII one can travel as a
// header (Node throws on others, and an upstream answers 431 to a huge one). The gateway sets its own response id,
// so an upstream that gets none just names the request itself.
const FORWARDABLE_ID = /^[\x21-\x7e][\x20-\x7e]{0,255}$/

async function open(call: ChatBackendCall, stream: boolean): Promise<UpstreamResponse> {
  const settings = settingsOf(call)
  // First: an unusable base URL is answered before any credential is looked up.
  const endpoint = upstreamEndpoint(settings.baseUrl, 'chat/completions', call.model.id)
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  }
  if (FORWARDABLE_ID.test(call.requestId)) headers['x-request-id'] = call.requestId
  const credential =
    settings.apiKeyRef === undefined ? undefined : await resolveCredential(settings.apiKeyRef, call.model.id)
  if (credential !== undefined) headers.authorization = `Bearer ${credential}`
  const res = await postUpstream({
    endpoint,
    body: upstreamBody(call, settings, stream),
    headers,
    connectTimeoutMs: settings.connectTimeoutMs ?? config.inference.connectTimeoutMs,
    firstByteTimeoutMs: settings.firstByteTimeoutMs ?? config.inference.firstByteTimeoutMs,
    stream,
    retries: config.inference.upstreamRetries,
    signal: call.signal,
  })
  const status = res.statusCode
  if (status < 200 || status >= 300) throw upstreamError(status, await res.text(call.signal), res.retryAfter)
  return res
}

function parseEvent(event: string): string | undefined {
  // The usual event: one `data: ` line.
  if (event.startsWith('data: ') && !event.includes('\n')) return event.slice(6)
  let data: string | undefined
  for (const line of event.split('\n')) {
    if (!line.startsWith('data:')) continue
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5)
    data = data === undefined ? value : `${data}\n${value}`
  }
  return data
}

/**
 * What every chunk of one stream gets in place of the upstream's `id` and `model`, also as JSON texts, and the
 * stream's usual chunk layout once seen.
 */
type ChunkNames = {
  id: string
  model: string
  idJson: string
  modelJson: string
  template: ChunkTemplate
  /** Per choice index, whether its finish chunk came. */
  finished: boolean[]
}

function namesOf(call: ChatBackendCall): ChunkNames {
  const id = `chatcmpl-${call.requestId}`
  const model = call.model.id
  return {
    id,
    model,
    idJson: JSON.stringify(id),
    modelJson: JSON.stringify(model),
    template: new ChunkTemplate(id, model),
    finished: [],
  }
}

// Hosted upstreams leave out vLLM's per-choice keys: `logprobs` on every choice, `stop_reason` on the finish chunk
// (docs/inference.md §6.2). A few property checks per choice, and a chunk carries one choice. True when a key was added.
function fillChoiceNulls(parsed: Record<string, unknown>): boolean {
  const choices = parsed.choices
  if (!Array.isArray(choices)) return false
  let filled = false
  for (const choice of choices as Record<string, unknown>[]) {
    if (choice.logprobs === undefined) {
      choice.logprobs = null
      filled = true
    }
    if (choice.finish_reason === undefined) {
      choice.finish_reason = null
      filled = true
    } else if (choice.finish_reason !== null && choice.stop_reason === undefined) {
      choice.stop_reason = null
      filled = true
    }
  }
  return filled
}

// Notes the choices a chunk finishes: a stream cut after every choice finished lost nothing but its `[DONE]`.
function noteFinished(chunk: ChatCompletionChunk, names: ChunkNames): void {
  const choices = chunk.choices
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i] as ChatCompletionChunk['choices'][number]
    if (choice.finish_reason != null) names.finished[choice.index] = true
  }
}

/**
 * One upstream event as the contract's chunk, pushed onto `batch` with its JSON text when that can be sent as is
 * (chunk-json.ts): a content, finish or usage chunk of the stream's usual layout is taken from its text
 * (chunk-template.ts), anything else parsed. An upstream error event throws, nested (`{"error": {…}}`) or flat
 * (`{"object": "error", …}`, vLLM's ErrorResponse), and so does an event that is no chunk (no `choices` list).
 */
function addChunk(batch: ChunkBatch, data: string, names: ChunkNames): void {
  const usual = names.template.usualChunk(data)
  if (usual !== undefined) {
    batch.chunks.push(usual.chunk)
    batch.json.push(usual.json)
    noteFinished(usual.chunk, names)
    return
  }
  let parsed: Record<string, unknown>
  try {
    parsed = JSON.parse(data) as Record<string, unknown>
  } catch (cause) {
    throw new UpstreamError(500, INTERNAL_ERROR, { cause })
  }
  const nested = parsed.error !== undefined && parsed.error !== null
  if (nested || parsed.object === 'error') {
    const code = nested ? (parsed.error as { code?: unknown }).code : parsed.code
    throw upstreamError(typeof code === 'number' ? code : 500, data)
  }
  // Framing reads `choices` (a usage chunk's is empty): an event without it fails here, after the chunks before it.
  if (!Array.isArray(parsed.choices)) {
    throw new UpstreamError(500, INTERNAL_ERROR, { cause: new Error('upstream chunk has no choices list') })
  }
  // The contract's id is the gateway's request id and `model` its served name, whatever the upstream calls them.
  parsed.id = names.id
  parsed.model = names.model
  const filled = fillChoiceNulls(parsed)
  const json = filled ? undefined : rewriteChunkJson(data, names.idJson, names.modelJson)
  if (json !== undefined) names.template.learn(data, json)
  batch.chunks.push(parsed as unknown as ChatCompletionChunk)
  batch.json.push(json)
  noteFinished(parsed as unknown as ChatCompletionChunk, names)
}

// SSE line ends are CRLF, LF or CR (sse-starlette, behind llama-cpp-python, writes CRLF): all become LF.
const LINE_END = /\r\n?/g

/**
 * The upstream's SSE events, a batch per read of its body: every complete event the read finished is parsed and
 * handed over at once. An error event ends the stream after the chunks before it.
 */
async function* streamBatches(call: ChatBackendCall): AsyncGenerator<ChunkBatch> {
  const res = await open(call, true)
  const stopWatching = call.signal.onAbort(() => res.destroy())
  const names = namesOf(call)
  let pending = ''
  let complete = false
  // The last read ended with CR, already made LF: an LF that starts the next read is the rest of that CRLF.
  let afterCr = false
  try {
    for await (const piece of res) {
      if (complete) continue
      let text = piece
      if (afterCr) {
        afterCr = false
        if (text.charCodeAt(0) === 10) text = text.slice(1)
      }
      if (text.includes('\r')) {
        afterCr = text.charCodeAt(text.length - 1) === 13
        text = text.replace(LINE_END, '\n')
      }
      pending += text
      const batch: ChunkBatch = { chunks: [], json: [], complete: false }
      let failure: unknown
      let start = 0
      for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n', start)) {
        const data = parseEvent(pending.slice(start, end))
        start = end + 2
        if (data === undefined) continue
        if (data === '[DONE]') {
          // Leaving a `for await` over a response destroys it; read on to its end so the connection is reused.
          complete = true
          break
        }
        try {
          addChunk(batch, data, names)
        } catch (error) {
          failure = error
          break
        }
      }
      pending = complete ? '' : pending.slice(start)
      batch.complete = complete
      if (batch.chunks.length > 0) yield batch
      if (failure !== undefined) throw failure
    }
  } catch (error) {
    if (error instanceof UpstreamError) throw error
    throw new UpstreamError(500, INTERNAL_ERROR, { cause: error })
  } finally {
    stopWatching()
    // An unfinished stream is closed: that is how vLLM learns the client went away and stops generating.
    if (!complete) res.destroy()
  }
  if (complete) return
  // A stream whose every choice finished lost only its `[DONE]` (and maybe a usage chunk, which the gateway then
  // writes itself): it ends as usual.
  if (everyChoiceFinished(call, names)) return
  throw new UpstreamError(500, INTERNAL_ERROR, { cause: new Error('upstream stream ended without [DONE]') })
}

function everyChoiceFinished(call: ChatBackendCall, names: ChunkNames): boolean {
  const n = call.request.n ?? 1
  for (let i = 0; i < n; i++) if (names.finished[i] !== true) return false
  return n > 0
}

async function* streamChunks(call: ChatBackendCall): AsyncGenerator<ChatCompletionChunk> {
  for await (const batch of streamBatches(call)) yield* batch.chunks
}

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
function ensureUsage(body: ChatCompletionResponse, request: ChatCompletionRequest): void {
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

/** Forwards completions to an upstream OpenAI-compatible server (vLLM, SGLang, llama.cpp server, Ollama, hosted). */
export const openAiCompatibleBackend: ChatBackend = {
  async complete(call) {
    const res = await open(call, false)
    const text = await res.text(call.signal)
    let body: ChatCompletionResponse
    try {
      body = JSON.parse(text) as ChatCompletionResponse
    } catch (cause) {
      throw new UpstreamError(500, INTERNAL_ERROR, { cause })
    }
    body.id = `chatcmpl-${call.requestId}`
    body.model = call.model.id
    ensureUsage(body, call.request)
    return normalizeResponse(body)
  },
  stream: streamChunks,
  streamBatches,
}
