import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { createInferenceApp, createTracingApp, createTrainingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { newCaller, type TestCaller } from '../../support/auth.js'

const Body = z.object({ name: z.string() })

const apps = {
  inference: createInferenceApp().post('/v1/echo', validate('json', Body), (c) => c.json(c.req.valid('json'))),
  training: createTrainingApp().post('/v1/preview/echo', validate('json', Body), (c) => c.json(c.req.valid('json'))),
  tracing: createTracingApp().post('/echo', validate('json', Body), (c) => c.json(c.req.valid('json'))),
}
const paths = { inference: '/v1/echo', training: '/v1/preview/echo', tracing: '/echo' }
type Family = keyof typeof apps

const MESSAGE = 'There was an error parsing the body'
// FastAPI's 400 for a body `json.loads` cannot decode, in each family's error shape.
const REFUSALS: Record<Family, unknown> = {
  inference: { error: { message: MESSAGE, type: 'Bad Request', param: null, code: 400 } },
  training: { detail: MESSAGE },
  tracing: { reason: MESSAGE },
}

// `{"name":"val\xff\xfe"}`: two bytes that are no UTF-8, which a lenient decoder would turn into U+FFFD.
const INVALID = Buffer.concat([Buffer.from('{"name":"val'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])

let caller: TestCaller
const servers: ReturnType<typeof serve>[] = []
const ports = {} as Record<Family, number>

beforeAll(async () => {
  caller = await newCaller()
  for (const family of Object.keys(apps) as Family[]) {
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const started = serve({ fetch: apps[family].fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(started))
    })
    servers.push(server)
    ports[family] = (server.address() as AddressInfo).port
  }
})

afterAll(() => Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))))

// Sends the body in the given pieces over a real socket: with a Content-Length (read from Node's message) or chunked
// (read through Hono's request, as when no length is declared).
function sendOverNode(family: Family, pieces: Buffer[], chunked: boolean): Promise<{ status: number; body: unknown }> {
  const length = pieces.reduce((n, p) => n + p.length, 0)
  const headers: Record<string, string> = { ...caller.bearer, 'content-type': 'application/json' }
  if (!chunked) headers['content-length'] = String(length)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: ports[family], path: paths[family], method: 'POST', headers })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }))
    })
    req.on('error', reject)
    for (const piece of pieces) req.write(piece)
    req.end()
  })
}

async function sendThroughApp(family: Family, body: Uint8Array<ArrayBuffer>) {
  const headers = { ...caller.bearer, 'content-type': 'application/json' }
  const res = await apps[family].request(paths[family], { method: 'POST', headers, body })
  return { status: res.status, body: (await res.json()) as unknown }
}

describe('request bodies that are not UTF-8', () => {
  it('are refused with 400 "There was an error parsing the body" in every family through the app', async () => {
    for (const family of Object.keys(apps) as Family[]) {
      // Act
      const res = await sendThroughApp(family, new Uint8Array(INVALID))

      // Assess
      expect(res).toEqual({ status: 400, body: REFUSALS[family] })
    }
  })

  it('are refused the same on the Node server, with a Content-Length and chunked', async () => {
    for (const family of Object.keys(apps) as Family[]) {
      for (const chunked of [false, true]) {
        // Act
        const res = await sendOverNode(family, [INVALID], chunked)

        // Assess
        expect(res).toEqual({ status: 400, body: REFUSALS[family] })
      }
    }
  })
})

describe('request bodies that are UTF-8', () => {
  it('decode a character split across two reads, on both Node paths', async () => {
    // Prepare: "é" is C3 A9; the first write ends after C3.
    const whole = Buffer.from('{"name":"café ✓"}')
    const cut = whole.indexOf(0xc3) + 1

    for (const chunked of [false, true]) {
      // Act
      const res = await sendOverNode('training', [whole.subarray(0, cut), whole.subarray(cut)], chunked)

      // Assess
      expect(res).toEqual({ status: 200, body: { name: 'café ✓' } })
    }
  })

  it('drop a leading byte order mark on every path, as json.loads does', async () => {
    // Prepare
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"b"}')])

    // Act
    const results = [
      await sendThroughApp('tracing', new Uint8Array(withBom)),
      await sendOverNode('tracing', [withBom], false),
      await sendOverNode('tracing', [withBom], true),
    ]

    // Assess
    for (const res of results) expect(res).toEqual({ status: 200, body: { name: 'b' } })
  })
})

describe('a JSON null body', () => {
  it('is a missing body in every family, as FastAPI reads it', async () => {
    // Act
    const body = new TextEncoder().encode('null')
    const inference = await sendThroughApp('inference', body)
    const training = await sendThroughApp('training', body)
    const tracing = await sendThroughApp('tracing', body)

    // Assess
    const missing = { type: 'missing', loc: ['body'], msg: 'Field required', input: null }
    expect(training).toEqual({ status: 422, body: { detail: [missing] } })
    expect(tracing).toEqual({ status: 422, body: { detail: [missing] } })
    expect(inference).toEqual({
      status: 400,
      body: {
        error: {
          message:
            "1 validation error:\n  {'type': 'missing', 'loc': ('body',), 'msg': 'Field required', 'input': None}",
          type: 'Bad Request',
          param: 'body',
          code: 400,
        },
      },
    })
  })
})

describe('an integer field given something else', () => {
  it("reports pydantic's integer error types in the tracing family", async () => {
    // Prepare
    const app = createTracingApp().post('/count', validate('json', z.object({ count: z.int() })), (c) => c.json({}))
    const send = async (count: unknown) => {
      const headers = { ...caller.bearer, 'content-type': 'application/json' }
      const res = await app.request('/count', { method: 'POST', headers, body: JSON.stringify({ count }) })
      const { detail } = (await res.json()) as { detail: { type: string; msg: string }[] }
      return [res.status, detail[0]?.type, detail[0]?.msg]
    }

    // Act
    const results = await Promise.all(['x', '5', 1.5, true, null, [1]].map(send))

    // Assess
    expect(results).toEqual([
      [422, 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
      [422, 'int_type', 'Input should be a valid integer'],
      [422, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part'],
      [422, 'int_type', 'Input should be a valid integer'],
      [422, 'int_type', 'Input should be a valid integer'],
      [422, 'int_type', 'Input should be a valid integer'],
    ])
  })
})
