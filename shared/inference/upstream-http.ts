import { StringDecoder } from 'node:string_decoder'
import type { Dispatcher, Pool as PoolType } from 'undici'
import Pool from 'undici/lib/dispatcher/pool.js'
import { HttpError, misconfigured } from '#shared/errors/http-error'
import type { CancelSignal } from '#shared/inference/cancellation'
import { engineUnavailable, retryAfterOf, UpstreamError } from '#shared/inference/upstream-errors'
import { logger } from '#shared/logger'

// Upstream calls go through undici's connection pools (the HTTP/1.1 client behind Node's fetch) by their dispatch
// API: callbacks instead of node:http's ClientRequest, Agent and response stream, whose bookkeeping was the largest
// cost of the gateway's request path after the socket writes themselves. One keep-alive pool per origin and connect
// timeout.
const pools = new Map<string, PoolType>()

function poolFor(origin: string, connectTimeoutMs: number): PoolType {
  const key = `${origin} ${connectTimeoutMs}`
  let pool = pools.get(key)
  if (pool === undefined) {
    // Generation may pause between tokens for as long as it likes: no body timeout (the first byte has its own).
    pool = new Pool(origin, {
      keepAliveTimeout: 60_000,
      bodyTimeout: 0,
      headersTimeout: 0,
      connectTimeout: connectTimeoutMs,
    })
    pools.set(key, pool)
  }
  return pool
}

/** Where an upstream's chat completions are POSTed: its URL, parsed once. */
export type UpstreamEndpoint = { url: URL; origin: string; path: string }

const endpoints = new Map<string, UpstreamEndpoint>()

/**
 * The endpoint of `path` under a model's upstream base URL (`http://host:8000/v1` + `chat/completions`), cached. A
 * base URL that is not http(s), or that holds a user name or password (a catalog entry past the checks: written by
 * hand or by an older version), is a 503 naming the model, where the upstream pool would throw on every request or the
 * credentials would silently go unused.
 */
export function upstreamEndpoint(baseUrl: string, path: string, model: string): UpstreamEndpoint {
  const key = `${baseUrl}\u0000${path}`
  let endpoint = endpoints.get(key)
  if (endpoint === undefined) {
    const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`
    const url = URL.canParse(path, base) ? new URL(path, base) : undefined
    const credentials = url !== undefined && (url.username !== '' || url.password !== '')
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || credentials) {
      // The URL goes to the log, not to the client (it names the operator's network); one holding credentials, nowhere.
      logger.error('catalog model has an unusable upstream URL', { model, ...(credentials ? {} : { baseUrl }) })
      const problem = credentials ? 'must not contain a user name or password' : 'must be an http or https URL'
      throw misconfigured(`The upstream of model \`${model}\` is misconfigured: its base URL ${problem}`)
    }
    endpoint = { url, origin: url.origin, path: `${url.pathname}${url.search}` }
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
  /**
   * How long the first byte may take: for a stream, the first byte of the body (vLLM sends a stream's headers at once,
   * before the first token); for a JSON answer, the headers (vLLM sends them with the whole body, once generated).
   */
  firstByteTimeoutMs: number
  /** Whether the answer is a stream: its first-byte timeout runs until the body's first bytes, not its headers. */
  stream?: boolean
  retries: number
  signal: CancelSignal
}

class RetryableError extends Error {}

// Chunks an unread streaming body may hold before the upstream connection is paused.
const HIGH_WATER = 16

/**
 * An upstream answer once its headers arrived: the status, and the body as text pieces, read whole (`text()`) or as
 * they come (`for await`, paused while the reader falls behind). `destroy()` closes the connection: that is how vLLM
 * learns the client went away.
 */
export class UpstreamResponse implements AsyncIterable<string> {
  statusCode = 0
  /** An error answer's `Retry-After` header (kept only for statuses of 400 and more), else undefined. */
  retryAfter: string | undefined
  // Made when a piece first ends inside a character: most bodies are decoded a piece at a time without one.
  #decoder: StringDecoder | undefined
  readonly #pieces: string[] = []
  #ended = false
  #error: Error | undefined
  #wake: (() => void) | undefined
  #resume: (() => void) | undefined
  #paused = false
  #abort: ((error: Error) => void) | undefined
  // Set by `text()`: the whole body is wanted, so pieces just accumulate until the end.
  #whole: (() => void) | undefined

  /**
   * The whole body as text (read it this way or by iterating, not both). With `signal`, a client that goes away while
   * the body is still coming closes the upstream connection (that is how vLLM learns to stop) and the read rejects
   * with a 499.
   */
  text(signal?: CancelSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      let stopWatching: (() => void) | undefined
      const finish = () => {
        stopWatching?.()
        if (this.#error !== undefined) reject(this.#error)
        else resolve(this.#pieces.join(''))
      }
      if (this.#ended) return finish()
      this.#whole = finish
      stopWatching = signal?.onAbort(() => this.destroy(new UpstreamError(499, 'Client disconnected')))
      this.#resume?.()
    })
  }

  /**
   * Stops the request and closes its connection (a no-op once the body has ended); with `error`, a reader still
   * reading gets it.
   */
  destroy(error?: Error): void {
    if (this.#ended) return
    this.#ended = true
    if (error !== undefined) {
      this.#error ??= error
      this.#notify()
      this.#whole?.()
    }
    this.#abort?.(error ?? new Error('upstream response destroyed'))
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    for (;;) {
      // Every piece already read, as one: the reader handles what arrived in one go.
      const piece = this.#pieces.length > 1 ? this.#pieces.splice(0).join('') : this.#pieces.shift()
      if (piece !== undefined) {
        if (this.#paused && this.#pieces.length < HIGH_WATER / 2) {
          this.#paused = false
          this.#resume?.()
        }
        if (piece !== '') yield piece
        continue
      }
      if (this.#error !== undefined) throw this.#error
      if (this.#ended) return
      await new Promise<void>((resolve) => {
        this.#wake = resolve
      })
    }
  }

  /** @internal the dispatch handler's side. */
  connected(abort: (error: Error) => void): void {
    this.#abort = abort
  }

  /** @internal */
  headers(statusCode: number, resume: () => void): void {
    this.statusCode = statusCode
    this.#resume = resume
  }

  /** @internal returns false to pause the connection until the reader catches up. */
  data(chunk: Buffer): boolean {
    this.#pieces.push(this.#decode(chunk))
    this.#notify()
    if (this.#whole !== undefined || this.#pieces.length < HIGH_WATER) return true
    this.#paused = true
    return false
  }

  /** @internal */
  end(error?: Error): void {
    if (error === undefined && this.#decoder !== undefined) this.#pieces.push(this.#decoder.end())
    else this.#error ??= error
    this.#ended = true
    this.#notify()
    this.#whole?.()
  }

  // A piece whose last byte is ASCII ends on a character boundary (every byte of a multi-byte UTF-8 sequence is
  // 0x80 or more), so it decodes alone; once one does not, a decoder carries the split character over.
  #decode(chunk: Buffer): string {
    if (this.#decoder === undefined) {
      if (chunk.length === 0 || (chunk[chunk.length - 1] as number) < 0x80) return chunk.toString('utf8')
      this.#decoder = new StringDecoder('utf8')
    }
    return this.#decoder.write(chunk)
  }

  #notify(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}

function attempt(options: UpstreamRequestOptions): Promise<UpstreamResponse> {
  const { endpoint, body, headers, connectTimeoutMs, firstByteTimeoutMs, signal } = options
  const untilBody = options.stream === true
  return new Promise((resolve, reject) => {
    const response = new UpstreamResponse()
    let responded = false
    let failure: Error | undefined
    // Ends the request before its headers with `error` (the first cause wins), or the body after them.
    const fail = (error: Error) => {
      failure ??= error
      response.destroy()
    }
    // Until the first byte: a stream's headers alone do not stop it (vLLM sends them before generating anything).
    let firstByte: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
      firstByte = undefined
      const error = engineUnavailable(new Error('upstream first-byte timeout'))
      // After the headers the reader gets the 503 (in-stream, once heartbeats went out).
      if (responded) response.destroy(error)
      else fail(error)
    }, firstByteTimeoutMs)
    const firstByteCame = () => {
      clearTimeout(firstByte)
      firstByte = undefined
    }
    const stopWatching = signal.onAbort(() => fail(new UpstreamError(499, 'Client disconnected')))
    const handler: Dispatcher.DispatchHandlers = {
      onConnect(abort) {
        response.connected(abort)
        if (failure !== undefined) abort(failure)
      },
      onHeaders(statusCode, rawHeaders, resume) {
        // 1xx answers come before the real one.
        if (statusCode < 200) return true
        responded = true
        stopWatching()
        if (!untilBody) firstByteCame()
        if (statusCode >= 400) response.retryAfter = retryAfterOf(rawHeaders)
        response.headers(statusCode, resume)
        resolve(response)
        return true
      },
      onData(chunk) {
        if (firstByte !== undefined) firstByteCame()
        return response.data(chunk)
      },
      onComplete() {
        firstByteCame()
        response.end()
      },
      onError(error) {
        firstByteCame()
        stopWatching()
        if (responded) return response.end(error)
        const cause = failure ?? error
        if (cause instanceof HttpError) return reject(cause)
        // Refused, reset or timed-out connections never reached the engine's generation: safe to retry.
        reject(new RetryableError(error.message, { cause: error }))
      },
    }
    poolFor(endpoint.origin, connectTimeoutMs).dispatch(
      { origin: endpoint.origin, path: endpoint.path, method: 'POST', headers, body },
      handler,
    )
  })
}

const RETRY_STATUSES = new Set([502, 503, 504])

/**
 * POSTs a JSON body upstream, retrying refused or reset connections and 502/503/504 answers (nothing has reached
 * the client yet at this point); returns the response once its headers arrive. Given up, a 503 whose `Retry-After`
 * is at least that of the upstream's last answer when that was a 503.
 */
export async function postUpstream(options: UpstreamRequestOptions): Promise<UpstreamResponse> {
  let lastError: unknown
  let retryAfter: string | undefined
  for (let i = 0; i <= options.retries; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** i))
    if (options.signal.aborted) throw new UpstreamError(499, 'Client disconnected')
    try {
      const res = await attempt(options)
      if (!RETRY_STATUSES.has(res.statusCode)) return res
      res.destroy()
      lastError = new Error(`upstream answered ${res.statusCode}`)
      retryAfter = res.statusCode === 503 ? res.retryAfter : undefined
    } catch (error) {
      if (!(error instanceof RetryableError)) throw error
      lastError = error
      retryAfter = undefined
    }
    logger.warn('upstream attempt failed', { url: options.endpoint.url.origin, attempt: i + 1, error: lastError })
  }
  throw engineUnavailable(lastError, retryAfter)
}
