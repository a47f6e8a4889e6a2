import '../../support/lambda-shim.js'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { config } from '#shared/config'
import { listUsage } from '#shared/db/usage-repository'
import { settleAfterResponse } from '#shared/http/after-response'
import { estimatePromptTokens, flushUsage, hourOf } from '#shared/inference/usage-meter'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'
import { jsonInit } from '../../support/auth.js'
import { addUpstreamModel, upstreamModelFixture } from '../../support/models.js'
import { sseEvents } from '../../support/sse.js'
import { until } from '../../support/until.js'

const { upstream, caller, model } = await upstreamModelFixture()

// A vLLM server whose generation fails at once: its stream starts (200, headers sent) and its first event is vLLM's
// flat error, after `errorDelayMs`.
const ENGINE_ERROR = { object: 'error', message: 'engine failed', type: 'InternalServerError', param: null, code: 500 }
let errorDelayMs = 0
const failing = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders()
    setTimeout(() => res.end(`data: ${JSON.stringify(ENGINE_ERROR)}\n\ndata: [DONE]\n\n`), errorDelayMs)
  })
})
await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', () => resolve()))
afterAll(() => new Promise<void>((resolve) => failing.close(() => resolve())))
const failingModel = (
  await addUpstreamModel(`http://127.0.0.1:${(failing.address() as AddressInfo).port}/v1`, [caller.entity])
).id

beforeEach(() => {
  upstream.behave({})
  errorDelayMs = 0
  config.inference.heartbeatMs = 2_000
})

const messages = [{ role: 'user', content: 'Hello big world' }]

type Call = { op_name: string; output: unknown; summary: { usage?: Record<string, unknown> }; exception: string | null }

function chat(project: string, body: Record<string, unknown>) {
  const headers = { ...caller.bearer, 'OpenAI-Project': `${caller.entity}/${project}` }
  return app.request('/v1/chat/completions', jsonInit({ messages, model, ...body }, headers))
}

// The trace is written after the response: once that work has settled it is stored, or it never will be.
async function tracedCalls(project: string): Promise<Call[]> {
  await settleAfterResponse()
  const body = { project_id: `${caller.entity}/${project}` }
  const res = await queryApp.request('/calls/stream_query', jsonInit(body, caller.basic))
  return (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Call)
}

async function counters(project: string) {
  await flushUsage()
  return listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), project)
}

async function meteredRequests(project: string): Promise<number> {
  return (await counters(project)).reduce((n, c) => n + c.requests, 0)
}

describe('tracing of failed gateway completions', () => {
  it('traces a stream whose upstream answers an error before any chunk with the error and no usage, unmetered', async () => {
    // Prepare
    const project = `failed-stream-${Date.now()}`
    upstream.behave({ failStatus: 500, failMessage: 'upstream exploded' })

    // Act
    const res = await chat(project, { stream: true })
    const answer = (await res.json()) as { error: { message: string } }
    const calls = await tracedCalls(project)

    // Assess
    expect(res.status).toBe(500)
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({ op_name: 'loom.chat.completions', output: null })
    // Not metered, so no usage: `trace/usage` counts what `/v1/usage` counts.
    expect(calls[0]?.summary.usage).toBeUndefined()
    expect(calls[0]?.exception).toBe(answer.error.message)
    expect(await meteredRequests(project)).toBe(0)
  })

  it('traces an error event first the same within the heartbeat interval (JSON answer) and after heartbeats', async () => {
    // Prepare
    const project = `failed-first-event-${Date.now()}`
    config.inference.heartbeatMs = 40

    // Act: the error at once, then after several heartbeat intervals
    const early = await chat(project, { model: failingModel, stream: true })
    const earlyAnswer = (await early.json()) as { error: { message: string } }
    errorDelayMs = 200
    const late = await chat(project, { model: failingModel, stream: true })
    const lateEvents = sseEvents(await late.text())
    const calls = await tracedCalls(project)

    // Assess
    expect(early.status).toBe(500)
    expect(earlyAnswer.error.message).toBe('engine failed')
    expect(late.status).toBe(200)
    expect(lateEvents[0]).toBe(': keep-alive')
    expect(JSON.parse(lateEvents.at(-2) ?? '{}')).toMatchObject({ error: { message: 'engine failed' } })
    expect(calls).toHaveLength(2)
    for (const call of calls) {
      expect(call.exception).toBe('engine failed')
      expect(call.summary.usage).toBeUndefined()
    }
    expect(await meteredRequests(project)).toBe(0)
  })

  it('traces a JSON completion whose upstream answers 500 or 400 with the error and no usage, unmetered', async () => {
    // Prepare
    const project = `failed-json-${Date.now()}`

    // Act
    upstream.behave({ failStatus: 500, failMessage: 'upstream exploded' })
    const failed = await chat(project, {})
    const failedAnswer = (await failed.json()) as { error: { message: string } }
    upstream.behave({ failStatus: 400, failMessage: 'prompt too long for this model' })
    const refused = await chat(project, {})
    await refused.json()
    const calls = await tracedCalls(project)

    // Assess
    expect([failed.status, refused.status]).toEqual([500, 400])
    expect(calls.map((call) => call.exception).sort()).toEqual(
      [failedAnswer.error.message, 'prompt too long for this model'].sort(),
    )
    expect(calls.map((call) => call.summary.usage)).toEqual([undefined, undefined])
    expect(await meteredRequests(project)).toBe(0)
  })

  it('meters and traces a stream the client leaves before its first chunk as the JSON request: aborted, the prompt', async () => {
    // Prepare: the client leaves within the first heartbeat interval, before the answer's status is sent
    const project = `left-early-${Date.now()}`
    upstream.behave({ headerDelayMs: 1_000 })
    const aborter = new AbortController()
    const headers = { ...caller.bearer, 'OpenAI-Project': `${caller.entity}/${project}` }
    const init = jsonInit({ messages, model, stream: true }, headers)
    const before = upstream.seen.length

    // Act
    const pending = app.request('/v1/chat/completions', { ...init, signal: aborter.signal })
    await until(
      () => upstream.seen.length,
      (n) => n > before,
    )
    aborter.abort()
    await Promise.resolve(pending).catch(() => undefined)
    const metered = await until(
      () => counters(project),
      (found) => found.some((c) => c.requests > 0),
    )
    const calls = await tracedCalls(project)

    // Assess
    const prompt = estimatePromptTokens({ messages, model } as ChatCompletionRequest)
    expect(metered.reduce((n, c) => n + c.abortedRequests, 0)).toBe(1)
    expect(metered.reduce((n, c) => n + c.promptTokens, 0)).toBe(prompt)
    expect(metered.reduce((n, c) => n + c.completionTokens, 0)).toBe(0)
    expect(calls.map((call) => call.exception)).toEqual(['Client disconnected'])
    expect(calls[0]?.summary.usage).toEqual({
      [model]: { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt, requests: 1 },
    })
  })

  it('does not trace a request refused by validation, which never reached a model', async () => {
    // Prepare
    const project = `refused-${Date.now()}`
    const before = upstream.seen.length

    // Act
    const res = await chat(project, { temperature: -1 })
    await res.json()

    // Assess
    expect(res.status).toBe(400)
    expect(upstream.seen.length).toBe(before)
    expect(await tracedCalls(project)).toEqual([])
  })
})
