import type { IncomingMessage } from 'node:http'
import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit'
import { PayloadTooLargeError } from '#shared/errors/http-error'
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

function readIncoming(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.once('end', () => resolve(chunks.length === 1 ? String(chunks[0]) : Buffer.concat(chunks).toString()))
    incoming.once('error', reject)
    incoming.once('close', () => {
      if (!incoming.readableEnded) reject(new Error('Client disconnected before the request body ended'))
    })
  })
}

/**
 * The request body as text, read once and cached on the request like `c.req.text()`. On the Node server a body with
 * a declared length is read straight from the socket's message (the body limit already checked the length, and Node's
 * parser never reads past it), sparing the per-request fetch `Request`, stream and abort signal.
 */
export function requestText(c: Context<AppEnv>): Promise<string> {
  // Hono keeps the body's promise in this cache (its type names the resolved value).
  const cache = c.req.bodyCache as unknown as { text?: Promise<string> }
  if (cache.text !== undefined) return cache.text
  const incoming = nodeBindings(c)?.incoming
  if (incoming === undefined || Object.keys(c.req.bodyCache).length > 0 || declaredLength(c) === undefined) {
    return c.req.text()
  }
  cache.text = readIncoming(incoming)
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
