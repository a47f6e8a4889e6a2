import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import type { Context } from 'hono'
import type { AppEnv } from '#shared/http/app-env'
import { nodeBindings } from '#shared/http/node-bindings'
import { takeReleases } from '#shared/http/rate-limit'

/**
 * A streamed answer's text, pulled a piece at a time (a completion's SSE body: shared/inference/sse-stream.ts). After
 * the `last` piece the writer calls `finish()` and ends the answer once it resolved; if the client goes away first it
 * calls `cancel()` instead.
 */
export type StreamSource = {
  next(): Promise<{ text: string; last: boolean }>
  finish(): Promise<void>
  cancel(): Promise<void>
}

// Whether `promise` settles before the event loop's next check phase (within microtasks).
function settlesAtOnce(promise: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const immediate = setImmediate(() => resolve(false))
    const settled = () => {
      clearImmediate(immediate)
      resolve(true)
    }
    promise.then(settled, settled)
  })
}

// Resolves when Node's response can take more ('drain') or is gone ('close').
function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      outgoing.off('drain', done)
      outgoing.off('close', done)
      resolve()
    }
    outgoing.on('drain', done)
    outgoing.on('close', done)
  })
}

async function pipe(outgoing: ServerResponse, source: StreamSource, release: () => Promise<void>): Promise<void> {
  let gone = false
  outgoing.once('close', () => {
    if (outgoing.writableFinished) return
    gone = true
    // The client went away: the source stops its work and accounts for it, then the request's slots are freed.
    void source
      .cancel()
      .catch(() => undefined)
      .then(release)
      .catch(() => undefined)
  })
  try {
    for (;;) {
      const piece = await source.next()
      if (gone) return
      if (!piece.last) {
        if (!outgoing.write(piece.text)) await drained(outgoing)
        if (gone) return
        continue
      }
      // The last events are written (held in the socket while corked) before the end work starts: the source's
      // (metering, tracing) and freeing the request's slots. When that settles at once, as it does while metering
      // batches in memory, the events and the end of the body leave in one write; else the events go now.
      outgoing.cork()
      outgoing.write(piece.text)
      let corked = true
      // Both report their own failures (the limiter logs a failed release); the answer ends either way.
      const ending = source
        .finish()
        .catch(() => undefined)
        .then(release)
        .catch(() => undefined)
      if (!(await settlesAtOnce(ending))) {
        outgoing.uncork()
        corked = false
      }
      await ending
      outgoing.end()
      if (corked) outgoing.uncork()
      return
    }
  } catch {
    // Nothing the client can be told any more: the connection is closed, which cancels the source.
    outgoing.destroy()
  }
}

/**
 * On the Node server (`npm start`, the gateway bench): answers 200 with `headers` and the body pulled from `source`,
 * written straight to Node's response, and returns the marker Hono's Node adapter leaves alone. Returns undefined
 * elsewhere (Lambda, `app.request()`), where the caller answers with a ReadableStream of the same source. Same bytes;
 * without a web stream, its reader and Hono's piping, and with the headers leaving in the first body write rather than
 * in a packet of their own. The request's concurrency slots (shared/http/rate-limit.ts) are freed once the body ended
 * or the client went away, as they are for a ReadableStream body.
 */
export function streamOnNode(
  c: Context<AppEnv>,
  headers: OutgoingHttpHeaders,
  source: StreamSource,
): Response | undefined {
  const outgoing = nodeBindings(c)?.outgoing
  if (outgoing === undefined || outgoing.headersSent) return undefined
  const release = takeReleases(c)
  outgoing.writeHead(200, headers)
  void pipe(outgoing, source, release)
  return RESPONSE_ALREADY_SENT
}
