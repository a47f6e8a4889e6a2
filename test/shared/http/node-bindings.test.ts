import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestHeader, setResponseHeader } from '#shared/http/node-bindings'

// The helpers read Node's parsed request and write Node's response under the Node server, and fall back to Hono's
// own request and response elsewhere (Lambda, app.request): both must answer the same.
const app = new Hono().get('/echo', (c) => {
  setResponseHeader(c, 'X-Seen', requestHeader(c, 'x-test') ?? 'none')
  setResponseHeader(c, 'X-Absent', String(requestHeader(c, 'x-absent')))
  return c.json({ ok: true }, 200)
})

let server: ReturnType<typeof serve>
let port: number

beforeAll(async () => {
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve())
  })
  port = (server.address() as AddressInfo).port
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

// Raw headers, so a header can be sent twice.
function get(rawHeaders: string[]): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/echo', headers: rawHeaders }, (res) => {
      res.resume()
      res.on('end', () => resolve(res))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('Node bindings', () => {
  it('reads request headers and sets response headers on the Node server', async () => {
    // Act
    const res = await get(['Host', `127.0.0.1:${port}`, 'X-Test', 'a', 'X-Test', 'b'])

    // Assess
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-seen']).toBe('a, b')
    expect(res.headers['x-absent']).toBe('undefined')
    expect(res.headers['content-type']).toMatch(/^application\/json/)
  })

  it('answers the same through app.request, without Node bindings', async () => {
    // Act
    const res = await app.request('/echo', {
      headers: [
        ['X-Test', 'a'],
        ['X-Test', 'b'],
      ],
    })

    // Assess
    expect(res.status).toBe(200)
    expect(res.headers.get('x-seen')).toBe('a, b')
    expect(res.headers.get('x-absent')).toBe('undefined')
  })
})
