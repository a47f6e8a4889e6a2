import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Cancellation } from '#shared/inference/cancellation'
import { postUpstream, upstreamEndpoint } from '#shared/inference/upstream-http'

// A loopback server: `/many` streams 200 numbered lines in separate writes, `/hang` never answers, `/silent` sends
// its headers at once and never a byte of body, `/late` sends its headers at once and its body after 300 ms, `/partial`
// sends its headers and the start of a JSON body, then nothing more.
let server: Server
let base: string
let closed = 0

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/hang' || req.url === '/silent') {
        res.on('close', () => closed++)
        if (req.url === '/silent') res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders()
        return
      }
      if (req.url === '/partial') {
        res.on('close', () => closed++)
        res.writeHead(200, { 'content-type': 'application/json' }).write('{"id":"chatcmpl-1","choi')
        return
      }
      if (req.url === '/late') {
        res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders()
        setTimeout(() => res.end('{"late":true}'), 300)
        return
      }
      res.writeHead(200, { 'content-type': 'text/plain' })
      let i = 0
      const next = () => {
        if (i === 200) return res.end()
        res.write(`line ${i++} ${'é'.repeat(50)}\n`, next)
      }
      next()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})

// The upstream pool keeps its connections alive for a minute: end them, or close() waits for them that long.
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

function post(path: string, signal = new Cancellation(), firstByteTimeoutMs = 5_000, stream = false) {
  return postUpstream({
    stream,
    endpoint: upstreamEndpoint(base, path, 'test/model'),
    body: '{}',
    headers: { 'content-type': 'application/json' },
    connectTimeoutMs: 1_000,
    firstByteTimeoutMs,
    retries: 0,
    signal,
  })
}

describe('upstream responses', () => {
  it('deliver every piece in order to a slow reader, multi-byte characters intact', async () => {
    // Prepare
    const res = await post('many')
    let text = ''

    // Act
    for await (const piece of res) {
      text += piece
      await new Promise((resolve) => setImmediate(resolve))
    }

    // Assess
    const lines = text.trimEnd().split('\n')
    expect(res.statusCode).toBe(200)
    expect(lines).toHaveLength(200)
    expect(lines.every((line, i) => line === `line ${i} ${'é'.repeat(50)}`)).toBe(true)
  })

  it('read whole as text', async () => {
    // Act
    const text = await (await post('many')).text()

    // Assess
    expect(text.split('\n')).toHaveLength(201)
  })

  it('stop a request whose headers are late with the first-byte timeout, closing its connection', async () => {
    // Prepare
    const before = closed

    // Act
    const pending = post('hang', new Cancellation(), 100)

    // Assess
    await expect(pending).rejects.toMatchObject({ statusCode: 503 })
    await expect.poll(() => closed).toBe(before + 1)
  })

  it("stop a stream whose headers came but no byte of its body with the first-byte timeout, as the reader's 503", async () => {
    // Prepare: vLLM sends a stream's headers before its first token.
    const before = closed
    const res = await post('silent', new Cancellation(), 100, true)

    // Act
    const read = (async () => {
      for await (const _ of res);
    })()

    // Assess
    expect(res.statusCode).toBe(200)
    await expect(read).rejects.toMatchObject({ statusCode: 503, headers: { 'Retry-After': '1' } })
    await expect.poll(() => closed).toBe(before + 1)
  })

  it('time only the headers of a JSON answer: its body may come after the first-byte timeout', async () => {
    // Act
    const res = await post('late', new Cancellation(), 100)

    // Assess
    expect(await res.text()).toBe('{"late":true}')
  })

  it('stop a request when the client goes away before the headers', async () => {
    // Prepare
    const cancellation = new Cancellation()
    const before = closed
    const pending = post('hang', cancellation)

    // Act
    setTimeout(() => cancellation.abort(), 50)

    // Assess
    await expect(pending).rejects.toMatchObject({ statusCode: 499 })
    await expect.poll(() => closed).toBe(before + 1)
  })

  it('stop a JSON answer being read when the client goes away in the middle of its body (QA)', async () => {
    // Prepare: the headers came; the body stalls half-way (an engine that hung, a proxy that stopped forwarding).
    const cancellation = new Cancellation()
    const before = closed
    const res = await post('partial', cancellation)
    const reading = res.text(cancellation)

    // Act
    setTimeout(() => cancellation.abort(), 50)

    // Assess: the read ends with the client's 499 and the upstream connection is closed, not left to the upstream.
    await expect(reading).rejects.toMatchObject({ statusCode: 499 })
    await expect.poll(() => closed).toBe(before + 1)
  })

  it('close the upstream connection at once when the client left before the body was read', async () => {
    // Prepare
    const cancellation = new Cancellation()
    const before = closed
    const res = await post('partial', cancellation)
    cancellation.abort()

    // Act
    const reading = res.text(cancellation)

    // Assess
    await expect(reading).rejects.toMatchObject({ statusCode: 499 })
    await expect.poll(() => closed).toBe(before + 1)
  })
})
