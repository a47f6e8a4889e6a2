import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import { HttpError } from '#shared/errors/http-error'
import type { CancelSignal } from '#shared/inference/cancellation'
import { logger } from '#shared/logger'

// node:http with keep-alive agents rather than fetch: measurably less per-request overhead on the hot path, and
// direct control of the connect and first-byte timeouts.
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 256, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 256, scheduling: 'lifo' }),
}

/** An error answered on behalf of an upstream model server, with any status the contract allows. */
export class UpstreamError extends HttpError {
  readonly statusCode: number
  constructor(
    status: number,
    message: string,
    options: { param?: string; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, options)
    this.statusCode = status
  }
}

/** The message the contract gives unreachable or overloaded engines (W&B's 503). */
export const UNAVAILABLE = 'The engine is currently overloaded, please try again later'

/** Where an upstream's chat completions are POSTed: its URL, parsed once (Node's request options). */
export type UpstreamEndpoint = {
  url: URL
  protocol: 'http:' | 'https:'
  hostname: string
  port: number | undefined
  path: string
}

const endpoints = new Map<string, UpstreamEndpoint>()

/** The endpoint of `path` under an upstream's base URL (`http://host:8000/v1` + `chat/completions`), cached. */
export function upstreamEndpoint(baseUrl: string, path: string): UpstreamEndpoint {
  const key = `${baseUrl}\u0000${path}`
  let endpoint = endpoints.get(key)
  if (endpoint === undefined) {
    const url = new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`)
    endpoint = {
      url,
      protocol: url.protocol === 'https:' ? 'https:' : 'http:',
      // Node wants IPv6 literals without their brackets.
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
    }
    // Catalog base URLs are few; the bound only guards against a catalog that churns through many.
    if (endpoints.size >= 1_000) endpoints.clear()
    endpoints.set(key, endpoint)
  }
  return endpoint
}

/** Options of one upstream POST. */
export type UpstreamRequestOptions = {
  endpoint: UpstreamEndpoint
  body: string
  headers: Record<string, string>
  connectTimeoutMs: number
  firstByteTimeoutMs: number
  retries: number
  signal: CancelSignal
}

class RetryableError extends Error {}

function attempt(options: UpstreamRequestOptions): Promise<IncomingMessage> {
  const { endpoint, body, headers, connectTimeoutMs, firstByteTimeoutMs, signal } = options
  return new Promise((resolve, reject) => {
    const transport = endpoint.protocol === 'https:' ? https : http
    headers['content-length'] = String(Buffer.byteLength(body))
    const req = transport.request({
      method: 'POST',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      port: endpoint.port,
      path: endpoint.path,
      agent: AGENTS[endpoint.protocol],
      headers,
    })
    let responded = false
    const firstByte = setTimeout(() => {
      const cause = new Error('upstream first-byte timeout')
      req.destroy(new UpstreamError(503, UNAVAILABLE, { cause, headers: { 'Retry-After': String(RETRY_AFTER_S) } }))
    }, firstByteTimeoutMs)
    const stopWatching = signal.onAbort(() => req.destroy(new UpstreamError(499, 'Client disconnected')))
    const cleanup = () => {
      clearTimeout(firstByte)
      stopWatching()
    }
    req.on('socket', (socket) => {
      if (!socket.connecting) return
      const connect = setTimeout(() => {
        req.destroy(new RetryableError('upstream connect timeout'))
      }, connectTimeoutMs)
      socket.once('connect', () => clearTimeout(connect))
      socket.once('close', () => clearTimeout(connect))
    })
    req.on('response', (res) => {
      responded = true
      cleanup()
      resolve(res)
    })
    req.on('error', (error: NodeJS.ErrnoException) => {
      cleanup()
      if (responded) return
      if (error instanceof HttpError) return reject(error)
      // Refused, reset or timed-out connections never reached the engine's generation: safe to retry.
      reject(new RetryableError(error.message, { cause: error }))
    })
    // Writing once the socket is assigned lets Node send headers and body in one write (before, they are queued
    // and flushed as a writev, a second syscall on every request).
    req.once('socket', () => req.end(body))
  })
}

const RETRY_STATUSES = new Set([502, 503, 504])
// The gateway already retried; an engine that stays unreachable for that long is worth a short pause.
const RETRY_AFTER_S = 1

/**
 * POSTs a JSON body upstream, retrying refused or reset connections and 502/503/504 answers (nothing has reached
 * the client yet at this point); returns the response once its headers arrive.
 */
export async function postUpstream(options: UpstreamRequestOptions): Promise<IncomingMessage> {
  let lastError: unknown
  for (let i = 0; i <= options.retries; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** i))
    if (options.signal.aborted) throw new UpstreamError(499, 'Client disconnected')
    try {
      const res = await attempt(options)
      if (!RETRY_STATUSES.has(res.statusCode ?? 0)) return res
      res.resume()
      lastError = new Error(`upstream answered ${res.statusCode}`)
    } catch (error) {
      if (!(error instanceof RetryableError)) throw error
      lastError = error
    }
    logger.warn('upstream attempt failed', { url: options.endpoint.url.origin, attempt: i + 1, error: lastError })
  }
  throw new UpstreamError(503, UNAVAILABLE, { cause: lastError, headers: { 'Retry-After': String(RETRY_AFTER_S) } })
}

/** Reads a whole upstream response body as text. */
export function readBody(res: IncomingMessage): Promise<string> {
  // Events rather than `for await`: the async iterator costs a few microseconds on every completion.
  return new Promise((resolve, reject) => {
    let text = ''
    res.setEncoding('utf8')
    res.on('data', (piece: string) => {
      text += piece
    })
    res.once('end', () => resolve(text))
    res.once('error', reject)
    res.once('close', () => {
      if (!res.complete) reject(new Error('upstream closed the connection before the body ended'))
    })
  })
}

type UpstreamErrorBody = { error?: unknown; message?: unknown; detail?: unknown; param?: unknown }

/**
 * Maps an upstream error answer to the contract's error: client errors keep their status, message and param; a
 * rejected upstream credential or unknown upstream model is Loom's misconfiguration, so the caller sees a 500.
 */
export function upstreamError(status: number, text: string): UpstreamError {
  let message: string | undefined
  let param: string | undefined
  try {
    const body = JSON.parse(text) as UpstreamErrorBody
    const inner = typeof body.error === 'object' && body.error !== null ? (body.error as UpstreamErrorBody) : body
    const raw = inner.message ?? (typeof body.error === 'string' ? body.error : undefined) ?? body.detail
    message = typeof raw === 'string' ? raw : raw === undefined ? undefined : JSON.stringify(raw)
    if (typeof inner.param === 'string') param = inner.param
  } catch {
    message = text.trim() === '' ? undefined : text.slice(0, 1_000)
  }
  if (status === 401 || status === 403 || status === 404 || status < 400 || status > 599) {
    logger.error('upstream refused the gateway', { status, message })
    return new UpstreamError(500, 'The server had an error while processing your request')
  }
  const fallback = status >= 500 ? 'The server had an error while processing your request' : 'Bad Request'
  return new UpstreamError(status, message ?? fallback, param === undefined ? {} : { param })
}
