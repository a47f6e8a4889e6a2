import type { Server } from 'node:http'
import type { Duplex } from 'node:stream'

// What Node answers a request it cannot parse (its own default, kept): headers past its 16 KiB limit, a request that
// took too long to arrive, anything else malformed.
const ANSWERS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request took too long to arrive'],
}
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'The request is not valid HTTP']

/**
 * Answers what Node's HTTP parser refuses (before any route is known) with a JSON body in the combined shape API
 * Gateway's own answers use deployed (infra/api-stack.ts, `gatewayContextBody`): every family's client finds its
 * message (`error.message`, `reason`, `detail`), where Node would send the status line alone.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const [status, phrase, message] = (error.code === undefined ? undefined : ANSWERS[error.code]) ?? MALFORMED
    const type = status === 431 || status === 400 ? 'BadRequestError' : 'TimeoutError'
    const body = JSON.stringify({
      error: { message, type, param: null, code: status },
      reason: message,
      detail: message,
    })
    socket.end(
      `HTTP/1.1 ${status} ${phrase}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    )
  })
}
