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
 * Rejects bodies over `maxBytes` with a 413. A declared `Content-Length` is checked without touching the body (Hono's
 * own middleware reads `request.body` first, which on the Node server turns its lightweight request into a full fetch
 * `Request` with streams and an abort signal on every call); bodies without one are counted as they stream.
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = (): never => {
    throw new PayloadTooLargeError(`Request body larger than ${maxBytes} bytes`)
  }
  const counting = streamingBodyLimit({ maxSize: maxBytes, onError: tooLarge })
  return (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next()
    const length = declaredLength(c)
    if (length === undefined) return counting(c, next)
    if (length > maxBytes) tooLarge()
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
