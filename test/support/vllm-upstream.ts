import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A small real HTTP server on 127.0.0.1 speaking vLLM's OpenAI-compatible protocol, for tests and the benchmark.
 * It "generates" by echoing the last message's words as tokens (`"Hello big world"` → `Hello`, ` big`, ` world`),
 * capped by `max_completion_tokens ?? max_tokens` (finish `length`), and counts one prompt token per word plus
 * two per message. `behave()` injects failures and delays.
 */

/** Injected behaviour for the next requests. */
export type UpstreamBehaviour = {
  /** Answer every request with this status and vLLM error body (after `failTimes` answers, back to normal). */
  failStatus?: number
  failMessage?: string
  /** Headers of the failure answers (`Retry-After`). */
  failHeaders?: Record<string, string>
  /** A body of the failure answers other than vLLM's JSON error (a proxy's HTML page), sent as `text/html`. */
  failBody?: string
  /** How many requests fail before answers are normal again (default: all). */
  failTimes?: number
  /** Delay before the response headers, in ms. */
  headerDelayMs?: number
  /** Delay before the first SSE chunk (after headers), in ms. */
  firstChunkDelayMs?: number
  /** Delay between SSE chunks, in ms. */
  chunkDelayMs?: number
  /** Send this many content chunks, then an in-stream error event and [DONE]. */
  errorAfterChunks?: number
  /** Send this many content chunks, then cut the connection. */
  dropAfterChunks?: number
  /** Reply text instead of the echo. */
  reply?: string
  /** Answer like a hosted OpenAI-style API: none of vLLM's extra keys. */
  minimal?: boolean
  /** Leave usage out: no `usage` in a JSON answer, no usage on chunks and no usage chunk in a stream. */
  noUsage?: boolean
  /** End a stream's response (cleanly) without its `data: [DONE]`. */
  noDone?: boolean
  /** Send a JSON answer's headers and the first half of its body, then nothing more (a hung engine or proxy). */
  stallBody?: boolean
}

/** What the upstream saw of one request. */
export type SeenRequest = {
  headers: IncomingMessage['headers']
  body: Record<string, unknown>
  /** The body as sent, for what parsing loses (the digits of integers beyond 2^53). */
  raw: string
  closedEarly: boolean
  /** Resolves once the upstream's response has closed, finished or cut (then `closedEarly` is set). */
  closed: Promise<void>
}

/** A running test upstream. */
export type VllmUpstream = {
  url: string
  baseUrl: string
  seen: SeenRequest[]
  behave: (b: UpstreamBehaviour) => void
  close: () => Promise<void>
}

type Message = { role: string; content?: unknown }

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? '').join(' ')
  return ''
}

/** The tokens the upstream generates for a request body (exported so tests can predict the output). */
export function echoTokens(body: Record<string, unknown>, reply?: string): { tokens: string[]; finish: string } {
  const messages = (body.messages as Message[]) ?? []
  const source = reply ?? textOf(messages.at(-1)?.content)
  const words = source.split(/(?=\s)/).filter((w) => w !== '')
  const max = (body.max_completion_tokens ?? body.max_tokens) as number | undefined
  if (max !== undefined && words.length > max) return { tokens: words.slice(0, max), finish: 'length' }
  return { tokens: words, finish: 'stop' }
}

/** The prompt tokens the upstream counts for a request body. */
export function promptTokensOf(body: Record<string, unknown>): number {
  const messages = (body.messages as Message[]) ?? []
  return messages.reduce(
    (n, m) =>
      n +
      textOf(m.content)
        .split(/\s+/)
        .filter((w) => w !== '').length +
      2,
    0,
  )
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function errorBody(status: number, message: string) {
  const type = status === 400 ? 'BadRequestError' : status === 404 ? 'NotFoundError' : 'InternalServerError'
  return JSON.stringify({ error: { message, type, param: null, code: status } })
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = ''
  for await (const piece of req) text += piece
  return text
}

/** Starts the upstream; with `apiKey`, requests must carry `Authorization: Bearer <apiKey>` (else 401). */
export async function startVllmUpstream(options: { apiKey?: string; modelName?: string } = {}): Promise<VllmUpstream> {
  let behaviour: UpstreamBehaviour = {}
  let failures = 0
  const seen: SeenRequest[] = []
  const modelName = options.modelName ?? 'upstream-model'

  async function chat(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req)
    const body = JSON.parse(raw) as Record<string, unknown>
    let closed!: () => void
    const record: SeenRequest = {
      headers: req.headers,
      body,
      raw,
      closedEarly: false,
      closed: new Promise((resolve) => {
        closed = resolve
      }),
    }
    seen.push(record)
    res.on('close', () => {
      if (!res.writableFinished) record.closedEarly = true
      closed()
    })
    const b = behaviour
    if (b.headerDelayMs) await sleep(b.headerDelayMs)
    if (b.failStatus !== undefined && (b.failTimes === undefined || failures < b.failTimes)) {
      failures++
      const type = b.failBody === undefined ? 'application/json' : 'text/html'
      res.writeHead(b.failStatus, { 'content-type': type, ...b.failHeaders })
      res.end(b.failBody ?? errorBody(b.failStatus, b.failMessage ?? 'upstream failure'))
      return
    }
    const { tokens, finish } = echoTokens(body, b.reply)
    const prompt = promptTokensOf(body)
    const id = `chatcmpl-${req.headers['x-request-id'] ?? 'upstream'}`
    const created = Math.floor(Date.now() / 1000)
    const model = (body.model as string) ?? modelName
    if (body.stream !== true) {
      const usage = {
        prompt_tokens: prompt,
        total_tokens: prompt + tokens.length,
        completion_tokens: tokens.length,
        prompt_tokens_details: null,
      }
      const message = {
        role: 'assistant',
        content: tokens.join(''),
        refusal: null,
        annotations: null,
        audio: null,
        function_call: null,
        tool_calls: [],
        reasoning: null,
      }
      const choice = { index: 0, message, logprobs: null, finish_reason: finish, stop_reason: null, token_ids: null }
      const response = {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [choice],
        service_tier: null,
        system_fingerprint: null,
        usage,
        prompt_logprobs: null,
        prompt_token_ids: null,
        kv_transfer_params: null,
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      if (b.minimal) {
        const plain = { index: 0, message: { role: 'assistant', content: message.content }, finish_reason: finish }
        const counts = { prompt_tokens: prompt, completion_tokens: tokens.length, total_tokens: prompt + tokens.length }
        const answer = { id, object: 'chat.completion', created, model, choices: [plain], usage: counts }
        if (b.noUsage) delete (answer as Partial<typeof answer>).usage
        res.end(JSON.stringify(answer))
        return
      }
      if (b.noUsage) delete (response as Partial<typeof response>).usage
      const text = JSON.stringify(response)
      if (b.stallBody) {
        res.write(text.slice(0, text.length / 2))
        return
      }
      res.end(text)
      return
    }
    const options = (body.stream_options ?? {}) as { include_usage?: boolean; continuous_usage_stats?: boolean }
    const continuous = !b.noUsage && options.include_usage === true && options.continuous_usage_stats === true
    // Like vLLM (Starlette's StreamingResponse), a stream's headers go out at once, before the first token.
    res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders()
    const send = (chunk: Record<string, unknown>, completion: number) => {
      const full = { id, object: 'chat.completion.chunk', created, model, ...chunk }
      if (continuous)
        Object.assign(full, {
          usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
        })
      res.write(`data: ${JSON.stringify(full)}\n\n`)
    }
    if (b.firstChunkDelayMs) await sleep(b.firstChunkDelayMs)
    // A hosted OpenAI-style stream leaves out vLLM's `logprobs: null`, `stop_reason` and `prompt_token_ids`.
    const extras = (choice: Record<string, unknown>, last: boolean) =>
      b.minimal ? choice : { ...choice, logprobs: null, ...(last ? { stop_reason: null } : {}) }
    const role = {
      choices: [extras({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }, false)],
    }
    send(b.minimal ? role : { ...role, prompt_token_ids: null }, 0)
    for (let i = 0; i < tokens.length; i++) {
      if (res.destroyed) return
      if (b.chunkDelayMs) await sleep(b.chunkDelayMs)
      if (b.errorAfterChunks !== undefined && i === b.errorAfterChunks) {
        res.write(`data: ${errorBody(500, 'Internal server error')}\n\n`)
        res.end('data: [DONE]\n\n')
        return
      }
      if (b.dropAfterChunks !== undefined && i === b.dropAfterChunks) {
        res.destroy()
        return
      }
      const last = i === tokens.length - 1
      const choice = { index: 0, delta: { content: tokens[i] }, finish_reason: last ? finish : null }
      send({ choices: [extras(choice, last)] }, i + 1)
    }
    if (tokens.length === 0)
      send({ choices: [extras({ index: 0, delta: { content: '' }, finish_reason: finish }, true)] }, 0)
    if (options.include_usage === true && !b.noUsage) {
      const usage = { prompt_tokens: prompt, completion_tokens: tokens.length, total_tokens: prompt + tokens.length }
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`,
      )
    }
    res.end(b.noDone ? undefined : 'data: [DONE]\n\n')
  }

  const server: Server = createServer((req, res) => {
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: 'Unauthorized' }))
      return
    }
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      chat(req, res).catch(() => res.destroy())
      return
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          object: 'list',
          data: [{ id: modelName, object: 'model', created: 0, owned_by: 'vllm', root: modelName }],
        }),
      )
      return
    }
    res.writeHead(404, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ detail: 'Not Found' }))
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    baseUrl: `${url}/v1`,
    seen,
    behave: (b) => {
      behaviour = b
      failures = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
