import { config } from '#shared/config'
import type { ChatBackend, ChatBackendCall, ChunkBatch } from '#shared/inference/backend'
import { rewriteChunkJson } from '#shared/inference/chunk-json'
import { ChunkTemplate } from '#shared/inference/chunk-template'
import { resolveCredential } from '#shared/inference/credentials'
import { ensureUsage, normalizeResponse } from '#shared/inference/upstream-answer'
import { upstreamBody } from '#shared/inference/upstream-body'
import { UpstreamError, upstreamError } from '#shared/inference/upstream-errors'
import { postUpstream, type UpstreamResponse, upstreamEndpoint } from '#shared/inference/upstream-http'
import type { ChatCompletionChunk, ChatCompletionResponse } from '#shared/schemas/chat-completion'
import type { OpenAiCompatibleSettings } from '#shared/schemas/model'

const INTERNAL_ERROR = 'The server had an error while processing your request'

function settingsOf(call: ChatBackendCall): OpenAiCompatibleSettings {
  if (call.model.backend.kind !== 'openai-compatible')
    throw new Error(`model ${call.model.id} is not openai-compatible`)
  return call.model.backend
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
