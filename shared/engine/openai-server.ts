import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createReferenceBackend } from '#shared/engine/reference-backend'
import { maxModelLenOf, referenceCatalogModel } from '#shared/engine/settings'
import { BadRequestError, NotFoundError, UnsupportedMediaTypeError } from '#shared/errors/http-error'
import { inferenceErrorResponse } from '#shared/errors/inference-errors'
import { Cancellation } from '#shared/inference/cancellation'
import { checkServingRules } from '#shared/inference/serving-rules'
import { parseChatRequest } from '#shared/inference/validate-request'
import type { ChatCompletionChunk } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

/**
 * A minimal OpenAI-compatible server around the reference engine (`/v1/models`, `/v1/chat/completions`, JSON and
 * SSE), without auth or storage: the upstream for gateway tests and benchmarks, and a way to test the engine with
 * the real `openai` SDK.
 */

/** Options of `startReferenceServer`. */
export type ReferenceServerOptions = { models?: CatalogModel[]; port?: number; host?: string }

/** A running server: its base URL (ending in `/v1`) and how to stop it. */
export type ReferenceServer = { baseUrl: string; server: Server; close: () => Promise<void> }

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = []
  for await (const part of req) parts.push(part as Buffer)
  return Buffer.concat(parts).toString('utf8')
}

// The client asked for usage chunks, and usage on every chunk, only through `stream_options` (docs/inference.md §6.5).
function shape(
  chunk: ChatCompletionChunk,
  includeUsage: boolean,
  continuous: boolean,
): ChatCompletionChunk | undefined {
  if (chunk.choices.length === 0) return includeUsage ? chunk : undefined
  if (continuous && chunk.usage) return chunk
  const { usage: _, ...rest } = chunk
  return rest
}

/** Starts the server on 127.0.0.1 (an ephemeral port unless given). */
export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const models = options.models ?? [referenceCatalogModel()]
  const backend = createReferenceBackend()
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname
    if (req.method === 'GET' && path === '/v1/models') {
      const data = models.map((m) => ({
        id: m.id,
        object: 'model',
        created: m.created ?? 0,
        owned_by: m.ownedBy ?? 'system',
        root: m.root ?? m.id,
        max_model_len: maxModelLenOf(m),
      }))
      return send(res, 200, { object: 'list', data })
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions')
      throw new NotFoundError(`No route for ${req.method} ${path}`)
    if (!(req.headers['content-type'] ?? '').includes('application/json')) {
      throw new UnsupportedMediaTypeError("Unsupported Media Type: Only 'application/json' is allowed")
    }
    let raw: unknown
    try {
      raw = JSON.parse(await readBody(req))
    } catch (error) {
      throw new BadRequestError('Malformed JSON in request body', { cause: error })
    }
    const request = parseChatRequest(raw)
    const model = request.model ? models.find((m) => m.id === request.model) : models[0]
    if (!model) throw new NotFoundError(`The model \`${request.model}\` does not exist.`, { param: 'model' })
    checkServingRules(request, model)
    const cancellation = new Cancellation()
    res.on('close', () => cancellation.abort())
    const headerId = req.headers['x-request-id']
    const call = {
      request,
      model,
      requestId: typeof headerId === 'string' ? headerId : (request.request_id ?? randomUUID()),
      created: Math.floor(Date.now() / 1000),
      signal: cancellation,
    }
    if (request.stream !== true) return send(res, 200, await backend.complete(call))
    const iterator = backend.stream(call)[Symbol.asyncIterator]()
    const first = await iterator.next()
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    const includeUsage = request.stream_options?.include_usage === true
    const continuous = includeUsage && request.stream_options?.continuous_usage_stats === true
    try {
      for (let next = first; !next.done; next = await iterator.next()) {
        const chunk = shape(next.value, includeUsage, continuous)
        if (chunk) res.write(`data: ${JSON.stringify(chunk)}\n\n`)
      }
    } catch (error) {
      res.write(`data: ${JSON.stringify(inferenceErrorResponse(error).body)}\n\n`)
    }
    res.end('data: [DONE]\n\n')
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (res.headersSent) return res.end()
      const response = inferenceErrorResponse(error)
      send(res, response.status, response.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://${options.host ?? '127.0.0.1'}:${port}/v1`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
