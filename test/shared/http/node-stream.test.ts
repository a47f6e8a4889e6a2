import { request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type ServerType, serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, describe, expect, it } from 'vitest'
import type { AppEnv } from '#shared/http/app-env'
import { setResponseHeader } from '#shared/http/node-bindings'
import { type StreamSource, streamOnNode } from '#shared/http/node-stream'
import { rateLimits, releaseAfterResponse } from '#shared/http/rate-limit'
import type { Principal } from '#shared/schemas/api-key'
import { until } from '../../support/until.js'

type Script = {
  pieces: { text: string; last: boolean }[]
  /** What `finish()` returns (settles at once when absent). */
  finishing?: Promise<void>
  log: string[]
}

// A source that hands out the script's pieces, then never another (a stream whose next chunk is still coming).
function scriptedSource(script: Script): StreamSource {
  let at = 0
  return {
    next: () => {
      const piece = script.pieces[at++]
      return piece === undefined ? new Promise(() => undefined) : Promise.resolve(piece)
    },
    finish: () => {
      script.log.push('finish')
      return script.finishing ?? Promise.resolve()
    },
    cancel: async () => {
      script.log.push('cancel')
    },
  }
}

let script: Script = { pieces: [], log: [] }

// Behind the rate-limit middleware, whose releases are what a handler writing its own answer must take over.
const app = new Hono<AppEnv>()
  .use((c, next) => {
    c.set('auth', { keyId: 'k', entity: 'e' } as Principal)
    return next()
  })
  .use(rateLimits)
  .get('/stream', (c) => {
    releaseAfterResponse(c, async () => {
      script.log.push('release')
    })
    setResponseHeader(c, 'x-set-before', 'yes')
    const source = scriptedSource(script)
    return streamOnNode(c, { 'content-type': 'text/event-stream' }, source) ?? c.text('not on the Node server')
  })

const server = await new Promise<ServerType>((resolve) => {
  const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
})
const port = (server.address() as AddressInfo).port

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

function get(onData: (text: string, res: IncomingMessage) => void): Promise<{ res: IncomingMessage; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/stream', agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (piece: string) => {
        body += piece
        onData(body, res)
      })
      // A response the client destroyed ends with 'close' alone.
      res.on('close', () => resolve({ res, body }))
      res.on('error', () => undefined)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('streamOnNode', () => {
  it('writes the pieces after the headers set before, sends the last before the end work settles, then ends', async () => {
    // Prepare
    let settle: () => void = () => undefined
    script = {
      pieces: [
        { text: 'data: a\n\n', last: false },
        { text: 'data: b\n\ndata: [DONE]\n\n', last: true },
      ],
      finishing: new Promise<void>((resolve) => {
        settle = resolve
      }),
      log: [],
    }
    let seenWhilePending: string[] | undefined

    // Act
    const { res, body } = await get((text) => {
      if (seenWhilePending === undefined && text.endsWith('[DONE]\n\n')) {
        seenWhilePending = [...script.log]
        settle()
      }
    })

    // Assess
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream')
    expect(res.headers['x-set-before']).toBe('yes')
    expect(body).toBe('data: a\n\ndata: b\n\ndata: [DONE]\n\n')
    // The client had the last events while the end work was still running, and the slot was still held.
    expect(seenWhilePending).toEqual(['finish'])
    expect(script.log).toEqual(['finish', 'release'])
  })

  it('ends the body at once when the end work settles at once, and frees the slots once', async () => {
    // Prepare
    script = { pieces: [{ text: 'data: [DONE]\n\n', last: true }], log: [] }

    // Act
    const { body } = await get(() => undefined)

    // Assess
    expect(body).toBe('data: [DONE]\n\n')
    expect(script.log).toEqual(['finish', 'release'])
  })

  it('cancels the source and then frees the slots, once, when the client goes away mid-stream', async () => {
    // Prepare
    script = { pieces: [{ text: 'data: a\n\n', last: false }], log: [] }

    // Act
    await get((_text, res) => res.destroy())
    const log = await until(
      () => [...script.log],
      (l) => l.includes('release'),
    )

    // Assess
    expect(log).toEqual(['cancel', 'release'])
  })

  it('gives the caller nothing to return outside the Node server, so it answers with a ReadableStream', async () => {
    // Prepare
    script = { pieces: [], log: [] }

    // Act
    const res = await app.request('/stream')

    // Assess
    expect(await res.text()).toBe('not on the Node server')
    expect(script.log).toEqual(['release'])
  })
})
