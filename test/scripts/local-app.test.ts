import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { describe, expect, it } from 'vitest'
import { config } from '#shared/config'
import { createLocalApp } from '../../scripts/local/app.js'
import { newCaller } from '../support/auth.js'

describe('local server dispatch', () => {
  it("applies each family's own auth and error shape to its routes only", async () => {
    // Prepare
    const app = await createLocalApp()
    const caller = await newCaller()

    // Act
    const inference = await app.request('/v1/models', { headers: caller.basic })
    const tracing = await app.request('/calls/query_stats', {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: `${caller.entity}/p` }),
    })
    const unknown = await app.request('/nowhere')

    // Assess: Basic is a tracing scheme, so /v1 refuses it in the OpenAI shape while tracing accepts it.
    expect(inference.status).toBe(401)
    expect(((await inference.json()) as { error: { type: string } }).error.type).toBe('AuthenticationError')
    expect(tracing.status).toBe(200)
    expect(unknown.status).toBe(404)
  })

  it('answers an unknown /v1 path 404 and a wrong method 405 in the OpenAI shape, after the key check', async () => {
    // Prepare
    const app = await createLocalApp()
    const caller = await newCaller()
    const get = (path: string, headers: Record<string, string>) => app.request(path, { headers })

    // Act
    const noKey = await get('/v1/embeddings', {})
    const unknown = await app.request('/v1/completions', {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json' },
      body: '{}',
    })
    const wrongMethod = await get('/v1/chat/completions', caller.bearer)
    const training = await get('/v1/preview/nowhere', caller.bearer)

    // Assess: what vLLM's server (FastAPI behind its API-key middleware) answers, so the OpenAI SDK can read it.
    expect(noKey.status).toBe(401)
    expect(((await noKey.json()) as { error: { type: string } }).error.type).toBe('AuthenticationError')
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({
      error: { message: 'No route for POST /v1/completions', type: 'Not Found', param: null, code: 404 },
    })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('POST')
    expect(((await wrongMethod.json()) as { error: { code: number } }).error.code).toBe(405)
    expect(training.status).toBe(404)
    expect(await training.json()).toEqual({ detail: 'No route for GET /v1/preview/nowhere' })
  })

  it('serves every family route with a trailing slash, as each function app does behind API Gateway', async () => {
    // Prepare
    const app = await createLocalApp()
    const caller = await newCaller()

    // Act
    const models = await app.request('/v1/models/', { headers: caller.bearer })
    const usage = await app.request('/v1/usage/', { headers: caller.bearer })
    const tracing = await app.request('/calls/query_stats/', {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: `${caller.entity}/p` }),
    })
    const health = await app.request('/health/')

    // Assess
    expect([models.status, usage.status, tracing.status, health.status]).toEqual([200, 200, 200, 200])
  })

  it('serves a route with a trailing slash as API Gateway does', async () => {
    const app = await createLocalApp()
    const res = await app.request('/v1/chat/completions/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({
      error: { message: 'Authentication failed', type: 'AuthenticationError', param: null, code: 401 },
    })
  })
})

describe('local server over HTTP', () => {
  type Answer = { status: number; body: unknown }

  async function withServer(run: (port: number) => Promise<void>): Promise<void> {
    const app = await createLocalApp()
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 })
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    try {
      await run((server.address() as AddressInfo).port)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }

  // Sends `pieces` as separate writes, with a Content-Length or (when `chunked`) without one.
  function post(port: number, path: string, headers: Record<string, string>, pieces: Buffer[], chunked = false) {
    const length = pieces.reduce((n, p) => n + p.length, 0)
    return new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': length }) },
        },
        (res) => {
          const parts: Buffer[] = []
          res.on('data', (p: Buffer) => parts.push(p))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(String(Buffer.concat(parts))) }))
        },
      )
      req.on('error', reject)
      for (const piece of pieces) req.write(piece)
      req.end()
    })
  }

  // Splits a body inside a multi-byte character, so a reader that decodes pieces separately would corrupt it.
  function splitInsideCharacter(text: string): Buffer[] {
    const bytes = Buffer.from(text)
    const at = bytes.indexOf(Buffer.from('é')) + 1
    return [bytes.subarray(0, at), bytes.subarray(at)]
  }

  it('reads bodies with and without a declared length intact, split inside a character', async () => {
    await withServer(async (port) => {
      // Prepare
      const caller = await newCaller()
      const project = `${caller.entity}/p`
      const val = { text: 'café ☕ naïve 𝄞', n: 1 }
      const body = (id: string) => JSON.stringify({ obj: { project_id: project, object_id: id, val } })

      // Act
      const declared = await post(port, '/obj/create', caller.basic, splitInsideCharacter(body('declared')))
      const chunked = await post(port, '/obj/create', caller.basic, splitInsideCharacter(body('chunked')), true)
      const read = await post(port, '/obj/read', caller.basic, [
        Buffer.from(JSON.stringify({ project_id: project, object_id: 'chunked', digest: 'latest' })),
      ])

      // Assess: both digests are the digest of the same value, and the value reads back unchanged.
      expect(declared.status).toBe(200)
      expect(chunked.status).toBe(200)
      expect((chunked.body as { digest: string }).digest).toBe((declared.body as { digest: string }).digest)
      expect((read.body as { obj: { val: unknown } }).obj.val).toEqual(val)
    })
  })

  it('refuses oversized bodies with 413 whether their length is declared or not', async () => {
    await withServer(async (port) => {
      // Prepare
      const caller = await newCaller()
      const big = Buffer.from(`{"project_id":"${caller.entity}/p","x":"${'a'.repeat(config.maxBodyBytes)}"}`)

      // Act
      const declared = await post(port, '/calls/query_stats', caller.basic, [big])
      const chunked = await post(
        port,
        '/calls/query_stats',
        caller.basic,
        [big.subarray(0, 1000), big.subarray(1000)],
        true,
      )

      // Assess
      expect(declared.status).toBe(413)
      expect(chunked.status).toBe(413)
      expect(chunked.body).toEqual(declared.body)
    })
  })
})
