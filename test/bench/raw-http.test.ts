import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RawHttpClient, rawPost } from '../../bench/support/raw-http.js'

// The gateway bench's load generator frames responses itself; a real node:http server answers it here in every
// framing the gateways use.
let server: Server
let port: number
const seen: { path: string; body: string; auth: string | undefined; from: number | undefined }[] = []
// Called once `/stream` has written its first piece (and before its end): where a test cuts the connection.
let afterFirstPiece: (() => void) | undefined

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (piece: string) => {
      body += piece
    })
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body, auth: req.headers.authorization, from: req.socket.remotePort })
      if (req.url === '/length') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        res.end(body)
      } else if (req.url === '/empty') {
        res.writeHead(404, { 'content-length': '0' })
        res.end()
      } else if (req.url === '/close') {
        res.writeHead(200, { connection: 'close', 'content-length': '2' })
        res.end('ok')
      } else if (req.url === '/stream') {
        // Chunked, in pieces written across event-loop turns, each large enough to split across socket reads.
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(`data: ${'a'.repeat(70_000)}\n\n`)
        afterFirstPiece?.()
        setTimeout(() => {
          res.write('data: 0\r\n\r\n')
          setImmediate(() => res.end('data: [DONE]\n\n'))
        }, 20)
      } else {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' })
        res.end('no\n')
      }
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

describe('RawHttpClient', () => {
  it('sends the prebuilt request and frames Content-Length, empty and chunked responses on one connection', async () => {
    // Prepare
    const client = new RawHttpClient(port)
    const body = JSON.stringify({ hello: 'wörld' })
    const before = seen.length

    // Act
    const length = await client.request(rawPost(port, '/length', { authorization: 'Bearer k' }, body))
    const empty = await client.request(rawPost(port, '/empty', {}, ''))
    const stream = await client.request(rawPost(port, '/stream', {}, '{}'))
    const again = await client.request(rawPost(port, '/length', {}, body))
    client.close()

    // Assess
    const from = seen[before]?.from
    expect(seen.slice(before)).toEqual([
      { path: '/length', body, auth: 'Bearer k', from },
      { path: '/empty', body: '', auth: undefined, from },
      { path: '/stream', body: '{}', auth: undefined, from },
      { path: '/length', body, auth: undefined, from },
    ])
    expect([length.status, empty.status, stream.status, again.status]).toEqual([200, 404, 200, 200])
    expect(empty.ttfb).toBe(0)
    // The stream's end comes after the 20 ms pause; its first byte before it.
    expect(stream.ttfb).toBeLessThan(stream.total)
    expect(stream.total).toBeGreaterThanOrEqual(19)
    expect(length.ttfb).toBeGreaterThan(0)
  })

  it('keeps connections alive under concurrency, and replaces one the server closes', async () => {
    // Prepare
    const client = new RawHttpClient(port)
    const bytes = rawPost(port, '/length', {}, 'x')

    // Act
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => client.request(bytes)))
    const closed = await client.request(rawPost(port, '/close', {}, ''))
    const after = await client.request(bytes)
    client.close()

    // Assess
    expect(concurrent.map((t) => t.status)).toEqual(Array(20).fill(200))
    expect(closed.status).toBe(200)
    expect(after.status).toBe(200)
  })

  it("leaves a connection a second before the server's Keep-Alive timeout, instead of racing its close", async () => {
    // Prepare: Node announces `Keep-Alive: timeout=2` for a 2 s keep-alive window.
    const from: (number | undefined)[] = []
    const short = createServer((req, res) => {
      from.push(req.socket.remotePort)
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    short.keepAliveTimeout = 2_000
    await new Promise<void>((resolve) => short.listen(0, '127.0.0.1', resolve))
    const shortPort = (short.address() as AddressInfo).port
    const client = new RawHttpClient(shortPort)
    const bytes = rawPost(shortPort, '/', {}, '')

    // Act
    await client.request(bytes)
    await client.request(bytes)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const late = await client.request(bytes)
    client.close()
    short.closeAllConnections()
    await new Promise((resolve) => short.close(resolve))

    // Assess: the first two share a connection; the one after 1.1 s idle opens a new one, and succeeds.
    expect(late.status).toBe(200)
    expect(from[0]).toBe(from[1])
    expect(from[2]).not.toBe(from[1])
  })

  it('rejects when the server goes away mid-response', async () => {
    // Prepare
    const client = new RawHttpClient(port)

    // Act: the server goes away right after the first piece of the body, whatever the host's speed.
    afterFirstPiece = () => server.closeAllConnections()
    const stream = client.request(rawPost(port, '/stream', {}, '{}'))

    // Assess
    try {
      await expect(stream).rejects.toThrow(/ECONNRESET|connection closed mid-response/)
    } finally {
      afterFirstPiece = undefined
      client.close()
    }
  })
})
