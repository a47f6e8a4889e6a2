import net from 'node:net'

// The gateway bench's HTTP client: keep-alive HTTP/1.1 on plain sockets, each request written as prebuilt bytes and
// each response framed (status line, Content-Length or chunked body, trailers) without building headers objects or
// streams. The load generator shares two cores with the servers it measures, and every microsecond it spends is one
// the servers do not get: per request this costs about a third of undici's dispatch API and of autocannon 9 (both
// ~0.05 ms of CPU here, this ~0.018 ms). It reads only what framing needs; the servers are ours and the upstream's.

/** One exchange: status, time to the first body byte and to the end of the response, in milliseconds. */
export type Timing = { status: number; ttfb: number; total: number }

const HEAD_END = Buffer.from('\r\n\r\n')
const CRLF = Buffer.from('\r\n')
const EMPTY = Buffer.alloc(0)

/** A POST as the bytes sent on the wire. */
export function rawPost(port: number, path: string, headers: Record<string, string>, body: string): Buffer {
  const lines = [`POST ${path} HTTP/1.1`, `host: 127.0.0.1:${port}`, `content-length: ${Buffer.byteLength(body)}`]
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`)
}

/** The benchmarks' chat completion body: a short prompt, at most 16 tokens, streamed or not. */
export function benchChatBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say hello in a few words.' }],
    max_tokens: 16,
    ...(stream ? { stream: true } : {}),
  })
}

/** That completion of the fast model (`bench/fast`) as bytes for Loom's bench server (bench/support/loom-server.ts). */
export function loomChatRequest(port: number, key: string, stream: boolean): Buffer {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` }
  return rawPost(port, '/v1/chat/completions', headers, benchChatBody('bench/fast', stream))
}

type State = 'head' | 'length' | 'size' | 'data' | 'trailer'

class Connection {
  readonly socket: net.Socket
  private state: State = 'head'
  private pending: Buffer = EMPTY
  private remaining = 0
  private status = 0
  private closeAfter = false
  /** How long the server keeps this connection idle (its `Keep-Alive: timeout=` hint), and since when it is idle. */
  keepAliveMs = Number.POSITIVE_INFINITY
  idleSince = 0
  private started = 0
  private ttfb = 0
  private resolve: ((t: Timing) => void) | undefined
  private reject: ((e: Error) => void) | undefined

  constructor(
    port: number,
    private readonly release: (c: Connection) => void,
    private readonly drop: (c: Connection) => void,
  ) {
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.setNoDelay(true)
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk))
    this.socket.on('error', (error) => this.fail(error))
    this.socket.on('close', () => this.fail(new Error('connection closed mid-response')))
  }

  send(bytes: Buffer): Promise<Timing> {
    return new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
      this.started = performance.now()
      this.ttfb = 0
      this.socket.write(bytes)
    })
  }

  private fail(error: Error): void {
    this.drop(this)
    this.socket.destroy()
    const reject = this.reject
    this.resolve = undefined
    this.reject = undefined
    reject?.(error)
  }

  private finish(): void {
    const resolve = this.resolve
    const timing = { status: this.status, ttfb: this.ttfb, total: performance.now() - this.started }
    this.resolve = undefined
    this.reject = undefined
    this.state = 'head'
    if (this.closeAfter) {
      this.drop(this)
      this.socket.destroy()
    } else {
      this.idleSince = performance.now()
      this.release(this)
    }
    resolve?.(timing)
  }

  private body(taken: number): void {
    if (taken > 0 && this.ttfb === 0) this.ttfb = performance.now() - this.started
  }

  private onData(chunk: Buffer): void {
    const buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    this.pending = EMPTY
    let at = 0
    while (at < buf.length) {
      if (this.state === 'head') {
        const end = buf.indexOf(HEAD_END, at)
        if (end < 0) break
        const framing = this.readHead(buf.toString('latin1', at, end))
        at = end + 4
        if (framing === undefined) {
          this.fail(new Error(`HTTP ${this.status} without Content-Length or chunked body`))
          return
        }
        if (framing === 'chunked') {
          this.state = 'size'
        } else if (framing === 0) {
          this.finish()
        } else {
          this.state = 'length'
          this.remaining = framing
        }
      } else if (this.state === 'length' || this.state === 'data') {
        const taken = Math.min(this.remaining, buf.length - at)
        this.body(taken)
        at += taken
        this.remaining -= taken
        if (this.remaining > 0) continue
        if (this.state === 'length') this.finish()
        else this.state = 'size'
      } else {
        const eol = buf.indexOf(CRLF, at)
        if (eol < 0) break
        const line = buf.toString('latin1', at, eol)
        at = eol + 2
        if (this.state === 'trailer') {
          if (line === '') this.finish()
          continue
        }
        // A chunk's size line: hex, then optional extensions after ';'; the size excludes the CRLF after the data.
        const size = Number.parseInt(line, 16)
        if (!Number.isFinite(size)) {
          this.fail(new Error(`bad chunk size line: ${line.slice(0, 40)}`))
          return
        }
        this.state = size === 0 ? 'trailer' : 'data'
        this.remaining = size + 2
      }
    }
    if (at < buf.length) this.pending = buf.subarray(at)
  }

  /** Reads the status line and headers: the body's length, 'chunked', or undefined when it cannot be framed. */
  private readHead(head: string): number | 'chunked' | undefined {
    this.status = Number(head.slice(9, 12))
    let length: number | undefined
    let chunked = false
    this.closeAfter = false
    for (const line of head.split('\r\n').slice(1)) {
      const colon = line.indexOf(':')
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase()
      if (name === 'content-length') length = Number(value)
      else if (name === 'transfer-encoding') chunked = value.includes('chunked')
      else if (name === 'connection') this.closeAfter = value.includes('close')
      else if (name === 'keep-alive') {
        const timeout = /timeout=(\d+)/.exec(value)
        if (timeout !== null) this.keepAliveMs = Number(timeout[1]) * 1000
      }
    }
    if (chunked) return 'chunked'
    return length !== undefined && Number.isInteger(length) ? length : undefined
  }
}

/** Keep-alive connections to one loopback port, opened as concurrency needs them. */
export class RawHttpClient {
  private readonly idle: Connection[] = []
  private readonly all = new Set<Connection>()

  constructor(private readonly port: number) {}

  request(bytes: Buffer): Promise<Timing> {
    let connection = this.idle.pop()
    // A connection near the end of the server's keep-alive window may be closed as the request goes out (a reset
    // that is the client's doing, not the server's failure): like undici, leave it a second early.
    while (connection !== undefined && performance.now() - connection.idleSince > connection.keepAliveMs - 1000) {
      this.forget(connection)
      connection.socket.destroy()
      connection = this.idle.pop()
    }
    if (connection === undefined) {
      connection = new Connection(
        this.port,
        (c) => this.idle.push(c),
        (c) => this.forget(c),
      )
      this.all.add(connection)
    }
    return connection.send(bytes)
  }

  close(): void {
    for (const c of this.all) c.socket.destroy()
    this.all.clear()
    this.idle.length = 0
  }

  private forget(c: Connection): void {
    this.all.delete(c)
    const i = this.idle.indexOf(c)
    if (i >= 0) this.idle.splice(i, 1)
  }
}
