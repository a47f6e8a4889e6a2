import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Context } from 'hono'

/** What `@hono/node-server` binds as `c.env` (the local server, benchmarks): Node's own request and response. */
export type NodeBindings = { incoming?: IncomingMessage; outgoing?: ServerResponse }

/** Node's request and response under the Node server; `undefined` under Lambda and `app.request()`. */
export function nodeBindings(c: Context): NodeBindings | undefined {
  return c.env as NodeBindings | undefined
}

/**
 * A request header by its lower-case name. On the Node server it is read from the headers Node has already parsed:
 * Hono's `c.req.header()` first builds a fetch `Headers` from every raw header of the request, on every request.
 * Node joins repeated headers with `, ` as `Headers` does, except for the few it keeps only once (`authorization`,
 * `content-type`, `content-length`, ...), where the first wins.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = nodeBindings(c)?.incoming
  if (incoming === undefined) return c.req.header(name)
  const value = incoming.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/**
 * Sets a response header before the handler answers. On the Node server it goes straight onto Node's response, which
 * merges it into the answer's own headers; through Hono's `c.header()` it would make every response carry a fetch
 * `Headers` object that the server then converts back.
 */
export function setResponseHeader(c: Context, name: string, value: string): void {
  const outgoing = nodeBindings(c)?.outgoing
  if (outgoing === undefined || outgoing.headersSent) c.header(name, value)
  else outgoing.setHeader(name, value)
}

/**
 * Whether the client has gone away before its answer was written: Node's response was closed unfinished on the Node
 * server (its `close` is how the gateway sees a disconnect there), else the request's own signal aborted.
 */
export function clientGone(c: Context): boolean {
  const outgoing = nodeBindings(c)?.outgoing
  if (outgoing !== undefined) return outgoing.destroyed && !outgoing.writableFinished
  return c.req.raw.signal?.aborted === true
}
