import { Writable } from 'node:stream'

// Streaming handlers call `awslambda.streamifyResponse` when their module loads; outside Lambda it is missing (the
// AWS SDK may already have created `globalThis.awslambda` for its own use, so only the missing members are added).
// Import this module before such a handler (STYLE §11's shim).
type LambdaGlobal = { streamifyResponse?: unknown; HttpResponseStream?: unknown }
const g = globalThis as { awslambda?: LambdaGlobal }
g.awslambda ??= {}
g.awslambda.streamifyResponse ??= (f: unknown) => f
g.awslambda.HttpResponseStream ??= { from: (s: unknown) => s }

/** The members of a Node `Writable` that the runtime's response stream exposes (it is not a `Writable` itself). */
const EXPOSED = ['write', 'end', 'destroy', 'cork', 'uncork', 'on', 'once', 'off', 'emit', 'removeListener'] as const
const EXPOSED_STATE = ['destroyed', 'writable', 'writableEnded', 'writableFinished', 'writableNeedDrain'] as const

/** A response stream as the Lambda runtime hands it to a streaming handler, and the test's side of it. */
export type ShimResponseStream = {
  /** What the handler receives (pass it as `responseStream`). */
  stream: Pick<Writable, (typeof EXPOSED)[number] | (typeof EXPOSED_STATE)[number]>
  /** The body bytes written so far, as text. */
  text: () => string
  /** Resolves with the text written so far once `seen(text)` holds (checked after every write); rejects on close. */
  until: (seen: (text: string) => boolean) => Promise<string>
  /** The client goes away: the runtime's connection fails and it destroys the stream with the socket's error. */
  disconnect: () => void
}

/**
 * A stand-in for the runtime's response stream (aws-lambda-nodejs-runtime-interface-client `createResponseStream`):
 * a plain object whose methods are bound to an underlying writable (there an HTTP/1.1 chunked request to the Runtime
 * API), so `instanceof Writable` is false, as it is in Lambda. When that connection fails, the runtime calls
 * `destroy(error)` on it: the stream emits `error` then `close`, and later writes are dropped.
 */
export function lambdaResponseStream(): ShimResponseStream {
  let text = ''
  type Waiter = { seen: (text: string) => boolean; resolve: (text: string) => void; reject: (error: Error) => void }
  const waiters: Waiter[] = []
  const inner = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      text += String(chunk)
      for (const waiter of [...waiters]) {
        if (!waiter.seen(text)) continue
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(text)
      }
      callback()
    },
  })
  // The runtime listens for its request's errors itself: a lost connection never reaches the process as uncaught.
  inner.on('error', () => undefined)
  inner.on('close', () => {
    for (const waiter of waiters.splice(0)) waiter.reject(new Error(`The response stream closed after: ${text}`))
  })
  const stream = {} as ShimResponseStream['stream']
  for (const method of EXPOSED) Object.assign(stream, { [method]: inner[method].bind(inner) })
  for (const key of EXPOSED_STATE) Object.defineProperty(stream, key, { get: () => inner[key] })
  return {
    stream,
    text: () => text,
    until: (seen) =>
      seen(text) ? Promise.resolve(text) : new Promise((resolve, reject) => waiters.push({ seen, resolve, reject })),
    disconnect: () => inner.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
  }
}
