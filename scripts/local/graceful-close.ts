import type { Server, ServerResponse } from 'node:http'

/** Stops a server for a clean exit; made by `gracefulCloser` when the server starts. */
export type GracefulCloser = { close: (graceMs: number) => Promise<{ cut: boolean }> }

/**
 * Follows a Node HTTP server's responses so that it can stop cleanly: on `close`, no new connection is accepted,
 * every response not yet started and every later one closes its connection (`Connection: close`: a client looping
 * requests on a keep-alive connection cannot keep the server serving), each connection closes as soon as it is idle,
 * and those still open after `graceMs` (a stream that does not end) are cut. `close` resolves once every connection is
 * closed, with whether any had to be cut, so the writes the answered requests left can be made before the store they
 * write to stops.
 */
export function gracefulCloser(server: Server): GracefulCloser {
  const open = new Set<ServerResponse>()
  let closing = false
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (closing) res.shouldKeepAlive = false
    open.add(res)
    res.once('close', () => open.delete(res))
    // A connection whose last response just ended is idle: closed now rather than when its client sends again.
    res.once('finish', () => {
      if (closing) setImmediate(() => server.closeIdleConnections())
    })
  })
  return {
    close(graceMs) {
      closing = true
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false
      let cut = false
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          cut = true
          server.closeAllConnections()
        }, graceMs)
        server.close(() => {
          clearTimeout(timer)
          resolve({ cut })
        })
        server.closeIdleConnections()
      })
    },
  }
}
