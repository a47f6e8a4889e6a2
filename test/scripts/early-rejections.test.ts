import { request } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocalApp } from '../../scripts/local/app.js'
import { newCaller, type TestCaller } from '../support/auth.js'

type Answer = { status: number; body: string; error?: string }

// A real HTTP client over loopback: the body is written in 64 KiB chunks while the server may already have answered,
// as an SDK uploading a large batch does. Resolves with whatever answer arrived (or the socket error, if none did).
function post(port: number, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    let settled = false
    const done = (a: Answer) => {
      if (!settled) resolve(a)
      settled = true
    }
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, 'content-length': body.length } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
        res.on('error', (e) =>
          done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), error: e.message }),
        )
      },
    )
    req.on('error', (e) => done({ status: 0, body: '', error: e.message }))
    let offset = 0
    const pump = () => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + 64 * 1024)
        offset += chunk.length
        if (!req.write(chunk)) {
          req.once('drain', pump)
          return
        }
      }
      req.end()
    }
    pump()
  })
}

// A client on a slow link that reads only once it has sent everything (as Python's `requests` does): the body goes out
// in 64 KiB pieces `pauseMs` apart; the answer is whatever the socket received before it closed.
async function slowPost(port: number, path: string, headers: Record<string, string>, body: Buffer, pauseMs: number) {
  const socket = connect(port, '127.0.0.1')
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  const received: Buffer[] = []
  let error: string | undefined
  socket.on('error', (e) => {
    error = e.message
  })
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  const head = Object.entries({ host: '127.0.0.1', 'content-length': String(body.length), ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`)
  for (let offset = 0; offset < body.length && !socket.destroyed; offset += 64 * 1024) {
    socket.write(body.subarray(offset, offset + 64 * 1024))
    await sleep(pauseMs)
  }
  // Only now does the client read: until then what the server sent waits in the socket's buffers.
  const complete = new Promise<void>((resolve) => {
    socket.on('data', (c: Buffer) => {
      received.push(c)
      // A whole answer (head and Content-Length bytes of body) ends the wait on a connection kept alive.
      const text = Buffer.concat(received).toString()
      const end = text.indexOf('\r\n\r\n')
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? Number.NaN)
      if (end >= 0 && Buffer.byteLength(text.slice(end + 4)) >= length) resolve()
    })
  })
  await Promise.race([closed, complete, sleep(5_000)])
  socket.destroy()
  const text = Buffer.concat(received).toString()
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, error }
}

let server: ReturnType<typeof serve>
let port: number
let caller: TestCaller
beforeAll(async () => {
  caller = await newCaller()
  const app = await createLocalApp()
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve())
  })
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const MB = 1024 * 1024

describe('requests refused before their body is read', () => {
  it('answer 401 to a 1.5 MB upload with a bad key instead of resetting the connection', async () => {
    // Prepare
    const body = Buffer.from(JSON.stringify({ batch: [], pad: 'x'.repeat(1.5 * MB) }))

    // Act
    const res = await post(
      port,
      '/call/upsert_batch',
      { authorization: 'Basic YXBpOmJhZA==', 'content-type': 'application/json' },
      body,
    )

    // Assess
    expect(res.error).toBeUndefined()
    expect(res.status).toBe(401)
    expect(JSON.parse(res.body)).toHaveProperty('reason')
  })

  it('answer 401 to a slow 1.5 MB upload with a bad key, read only after the upload, and close cleanly', async () => {
    // Prepare
    const body = Buffer.from(JSON.stringify({ batch: [], pad: 'x'.repeat(1.5 * MB) }))

    // Act
    const res = await slowPost(
      port,
      '/call/upsert_batch',
      { authorization: 'Basic YXBpOmJhZA==', 'content-type': 'application/json' },
      body,
      40,
    )

    // Assess
    expect(res.error).toBeUndefined()
    expect(res.status).toBe(401)
    expect(res.text).toMatch(/connection: close/i)
  })

  it('answer 404 to a slow 1.5 MB upload to an unknown route', async () => {
    // Prepare
    const body = Buffer.alloc(1.5 * MB, 0x20)

    // Act
    const res = await slowPost(
      port,
      '/no/such/route',
      { ...caller.basic, 'content-type': 'application/json' },
      body,
      40,
    )

    // Assess
    expect(res.error).toBeUndefined()
    expect(res.status).toBe(404)
  })

  it('answer a 1.5 MB project_id on the annotation progress route with a 4xx', async () => {
    // Prepare
    const body = Buffer.from(
      JSON.stringify({ project_id: `${caller.entity}/${'p'.repeat(1.5 * MB)}`, annotation_state: 'completed' }),
    )

    // Act
    const fast = await post(
      port,
      '/annotation_queues/q1/items/i1/progress',
      { ...caller.basic, 'content-type': 'application/json' },
      body,
    )
    const slow = await slowPost(
      port,
      '/annotation_queues/q1/items/i1/progress',
      { ...caller.basic, 'content-type': 'application/json' },
      body,
      40,
    )

    // Assess
    expect(fast.error).toBeUndefined()
    expect(fast.status).toBe(400)
    expect(JSON.parse(fast.body).reason).toMatch(/not found/)
    expect(slow.error).toBeUndefined()
    expect(slow.status).toBe(400)
  })

  it('answer 413 to a body over the limit declared in Content-Length, before reading it', async () => {
    // Prepare
    const body = Buffer.alloc(6 * MB, 0x20)

    // Act
    const res = await post(port, '/obj/create', { ...caller.basic, 'content-type': 'application/json' }, body)
    const slow = await slowPost(port, '/obj/create', { ...caller.basic, 'content-type': 'application/json' }, body, 10)

    // Assess
    expect(res.error).toBeUndefined()
    expect(res.status).toBe(413)
    expect(JSON.parse(res.body)).toEqual({ reason: 'Request too large' })
    expect(slow.error).toBeUndefined()
    expect(slow.status).toBe(413)
    expect(slow.text).toMatch(/connection: close/i)
  })
})
