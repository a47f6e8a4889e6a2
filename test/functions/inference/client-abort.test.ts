import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type ServerType, serve } from '@hono/node-server'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { config } from '#shared/config'
import { putModel } from '#shared/db/model-repository'
import { listUsage } from '#shared/db/usage-repository'
import { engineFor } from '#shared/engine/engine'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { clearCatalogCache, resolveModel } from '#shared/inference/catalog'
import { flushUsage, hourOf } from '#shared/inference/usage-meter'
import { logger } from '#shared/logger'
import { jsonInit, newCaller } from '../../support/auth.js'
import { captureStdout } from '../../support/stdout.js'
import { until } from '../../support/until.js'

// QA: a client cancelling a non-streamed completion of the built-in model after ~40 ms was logged as a server error
// (`ERROR "request failed"` with the engine's `Client disconnected` 503) and counted in ServerErrors. The client here
// leaves while its request waits for the only slot of a reference model (held by a stream nobody reads), so it leaves
// before any answer however slow the host is.
const caller = await newCaller()
const MODEL = `loom/abort-${randomUUID().slice(0, 8)}`
await putModel(referenceCatalogModel({ id: MODEL, backend: { kind: 'reference', settings: { maxConcurrency: 1 } } }))
clearCatalogCache()

function body() {
  return { model: MODEL, messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 8 }
}

/** Holds the model's only slot with a stream left unread until the returned function cancels it. */
async function holdTheSlot(): Promise<() => Promise<void>> {
  const res = await app.request(
    '/v1/chat/completions',
    jsonInit({ ...body(), stream: true, max_tokens: 512, ignore_eos: true }, caller.bearer),
  )
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  await reader.read()
  return () => reader.cancel()
}

/** Resolves once a request waits for the model's slot. */
async function queued(): Promise<void> {
  const { scheduler } = engineFor(await resolveModel(MODEL, caller.entity))
  await until(
    () => scheduler.waiting,
    (n) => n > 0,
  )
}

const headers = (project: string) => ({ ...caller.bearer, 'OpenAI-Project': `${caller.entity}/${project}` })

// The chat app on the local server's adapter, where a disconnect shows as Node's response closing unfinished.
const server = await new Promise<ServerType>((resolve) => {
  const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
const { port } = server.address() as AddressInfo

let written: string[]

beforeEach(() => {
  written = captureStdout()
  vi.spyOn(logger, 'error')
  config.metrics.enabled = true
})

afterEach(() => {
  config.metrics.enabled = false
  vi.restoreAllMocks()
})

// The EMF records the request metrics middleware wrote (Powertools writes them to stdout).
function emfRecords(): Record<string, unknown>[] {
  return written
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

async function metered(project: string) {
  return until(
    async () => {
      await flushUsage()
      return listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), project)
    },
    (found) => found.some((c) => c.requests > 0),
  )
}

async function tracedExceptions(project: string): Promise<(string | null)[]> {
  await settleAfterResponse()
  const res = await queryApp.request(
    '/calls/stream_query',
    jsonInit({ project_id: `${caller.entity}/${project}` }, caller.basic),
  )
  return (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { exception: string | null }).exception)
}

describe('a client that cancels a non-streamed completion', () => {
  it('is answered 499, not logged as a server error nor counted in ServerErrors, and still metered and traced', async () => {
    // Prepare
    const project = `abort-${Date.now()}`
    const aborter = new AbortController()

    // Act
    const release = await holdTheSlot()
    const pending = app.request('/v1/chat/completions', {
      ...jsonInit(body(), headers(project)),
      signal: aborter.signal,
    })
    await queued()
    aborter.abort()
    const res = await pending
    await release()
    const counters = await metered(project)
    const exceptions = await tracedExceptions(project)

    // Assess
    expect(res.status).toBe(499)
    expect(logger.error).not.toHaveBeenCalled()
    expect(emfRecords()).toContainEqual(expect.objectContaining({ Requests: 1, ClientErrors: 1, ServerErrors: 0 }))
    expect(counters.reduce((n, c) => n + c.abortedRequests, 0)).toBe(1)
    expect(exceptions).toEqual(['Client disconnected'])
  })

  it('on the Node server too: no server error, the request counted as a client error', async () => {
    // Prepare
    const project = `abort-node-${Date.now()}`
    const text = JSON.stringify(body())

    // Act
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { ...headers(project), 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
    })
    const release = await holdTheSlot()
    // The holding stream's own request record is not this request's.
    written.length = 0
    req.on('error', () => undefined)
    req.end(text)
    await queued()
    req.destroy()
    const records = await until(emfRecords, (found) => found.length > 0)
    await release()
    const counters = await metered(project)

    // Assess
    expect(logger.error).not.toHaveBeenCalled()
    expect(records).toEqual([expect.objectContaining({ Requests: 1, ClientErrors: 1, ServerErrors: 0 })])
    expect(counters.reduce((n, c) => n + c.abortedRequests, 0)).toBe(1)
  })
})
