import { isUtf8 } from 'node:buffer'
import type { IncomingMessage } from 'node:http'
import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit'
import { FrameworkHttpError, PayloadTooLargeError } from '#shared/errors/http-error'
import type { AppEnv } from '#shared/http/app-env'
import { nodeBindings, requestHeader } from '#shared/http/node-bindings'

function declaredLength(c: Context): number | undefined {
  const length = requestHeader(c, 'content-length')
  if (length === undefined || requestHeader(c, 'transfer-encoding') !== undefined) return undefined
  return Number.parseInt(length, 10)
}

/**
 * Rejects bodies over `maxBytes()` with a 413 (read per request, so the limit is the configuration's current one). A
 * declared `Content-Length` is checked without touching the body (Hono's own middleware reads `request.body` first,
 * which on the Node server turns its lightweight request into a full fetch `Request` with streams and an abort signal
 * on every call); bodies without one are counted as they stream.
 */
export function bodyLimit(maxBytes: () => number): MiddlewareHandler<AppEnv> {
  const tooLarge = (limit: number): never => {
    throw new PayloadTooLargeError(`Request body larger than ${limit} bytes`)
  }
  let counting: { limit: number; middleware: MiddlewareHandler } | undefined
  return (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next()
    const limit = maxBytes()
    const length = declaredLength(c)
    if (length === undefined) {
      if (counting?.limit !== limit) {
        counting = { limit, middleware: streamingBodyLimit({ maxSize: limit, onError: () => tooLarge(limit) }) }
      }
      return counting.middleware(c, next)
    }
    if (length > limit) tooLarge(limit)
    return next()
  }
}

/** FastAPI's answer (an HTTP 400, not a validation error) to a JSON body it cannot decode as text. */
export const UNPARSEABLE_BODY_MESSAGE = 'There was an error parsing the body'

/**
 * A body's bytes as text, or a 400 when they are not UTF-8. FastAPI hands the bytes to `json.loads`, whose decode
 * error is no JSON error and so becomes `HTTPException(400, "There was an error parsing the body")` (fastapi/routing.py);
 * decoding with replacement characters would instead accept the body and store text the client never sent. A leading
 * BOM is dropped, as both `json.loads` (utf-8-sig) and the fetch `Request.text()` decoder do. `isUtf8` is one simdutf
 * pass over the bytes.
 */
export function decodeBody(bytes: Uint8Array): string {
  if (!isUtf8(bytes)) throw new FrameworkHttpError(400, UNPARSEABLE_BODY_MESSAGE)
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const bom = buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf
  return buffer.toString('utf8', bom ? 3 : 0)
}

function readIncoming(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.once('end', () => {
      try {
        resolve(decodeBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)))
      } catch (error) {
        reject(error)
      }
    })
    incoming.once('error', reject)
    incoming.once('close', () => {
      if (!incoming.readableEnded) reject(new Error('Client disconnected before the request body ended'))
    })
  })
}

/**
 * The request body as text, read once and cached on the request like `c.req.text()`, which later returns it. On the
 * Node server a body with a declared length is read straight from the socket's message (the body limit already checked
 * the length, and Node's parser never reads past it), sparing the per-request fetch `Request`, stream and abort signal;
 * otherwise (Lambda, `app.request()`, a chunked body) through Hono's request. Either way the bytes go through
 * `decodeBody`, so a body that is not UTF-8 is a 400 on every path.
 */
export function requestText(c: Context<AppEnv>): Promise<string> {
  // Hono keeps the body's promise in this cache (its type names the resolved value).
  const cache = c.req.bodyCache as unknown as { text?: Promise<string> }
  if (cache.text !== undefined) return cache.text
  const incoming = nodeBindings(c)?.incoming
  if (incoming === undefined || Object.keys(c.req.bodyCache).length > 0 || declaredLength(c) === undefined) {
    cache.text = c.req.arrayBuffer().then((bytes) => decodeBody(new Uint8Array(bytes)))
  } else {
    cache.text = readIncoming(incoming)
  }
  return cache.text
}

// How much of an unread body an early answer waits for: beyond either bound the answer goes out at once (with
// `Connection: close`) and the client may see the connection reset, as with any server's lingering-close limit.
const DRAIN_MAX_MS = 10_000

/**
 * On the Node server, before an answer given without reading the request body (401, 403, a 413 on Content-Length, a
 * 400 on a header): reads and discards the rest of the body, up to `maxBytes` and 10 s, and marks the answer
 * `Connection: close`. A client still uploading (one that reads only after sending everything, as Python's `requests`
 * does) then gets the answer; closing with the body unread would make the kernel reset the connection (RST) and drop
 * the answer. A no-op under Lambda and `app.request()`, and once the body was read.
 */
export async function drainUnreadBody(c: Context, maxBytes: number): Promise<void> {
  const incoming = nodeBindings(c)?.incoming
  if (incoming === undefined || incoming.readableEnded || incoming.destroyed || !incomingHasBody(incoming)) return
  c.header('Connection', 'close')
  if ((declaredLength(c) ?? 0) > maxBytes || incoming.readableFlowing === true) return
  await new Promise<void>((resolve) => {
    let seen = 0
    const finish = () => {
      clearTimeout(timer)
      incoming.off('data', onData)
      incoming.off('end', finish)
      incoming.off('error', finish)
      incoming.off('close', finish)
      resolve()
    }
    const onData = (chunk: Buffer) => {
      seen += chunk.length
      if (seen > maxBytes) finish()
    }
    const timer = setTimeout(finish, DRAIN_MAX_MS)
    incoming.on('data', onData)
    incoming.once('end', finish)
    incoming.once('error', finish)
    incoming.once('close', finish)
    incoming.resume()
  })
}

function incomingHasBody(incoming: IncomingMessage): boolean {
  return incoming.headers['content-length'] !== undefined || incoming.headers['transfer-encoding'] !== undefined
}
