import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { handler } from '#functions/inference/create-chat-completion/handler'
import { handler as readObjHandler } from '#functions/tracing/read-obj/handler'
import { config } from '#shared/config'
import { listUsage } from '#shared/db/usage-repository'
import { afterResponse } from '#shared/http/after-response'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { createTracingApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { hourOf } from '#shared/inference/usage-meter'
import type { RateLimits } from '#shared/schemas/rate-limit'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { authorizerFor } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { invokeLambda } from '../../support/lambda-invoke.js'
import { lambdaResponseStream, type ShimResponseStream } from '../../support/lambda-shim.js'
import { addUpstreamModel } from '../../support/models.js'
import { publish } from '../../support/objects.js'
import { sseChunks } from '../../support/sse.js'
import { newProjectCaller } from '../../support/tracing.js'
import { promptTokensOf, startVllmUpstream } from '../../support/vllm-upstream.js'

const upstream = await startVllmUpstream()
afterAll(() => upstream.close())
const savedInference = { ...config.inference }

// Sixteen tokens 60 ms apart: the upstream is still generating long after the client leaves at the third.
const SLOW = { chunkDelayMs: 60, reply: 'a b c d e f g h i j k l m n o p' }
const TOKENS = 16

beforeEach(() => {
  upstream.behave({})
  // As in Lambda: usage is written before the invocation ends, not on a timer.
  Object.assign(config.inference, { ...savedInference, usageFlushMs: 0 })
})

afterAll(() => {
  Object.assign(config.inference, savedInference)
})

type StreamingHandler = (event: unknown, stream: ShimResponseStream['stream'], context: unknown) => Promise<void>
const invoke = handler as unknown as StreamingHandler

async function setup(limits?: RateLimits) {
  const caller = await newCaller(undefined, limits)
  const model = (await addUpstreamModel(upstream.baseUrl, [caller.entity])).id
  return { caller, model, limits }
}

// A streamed chat-completions REST event, as API Gateway sends it once the authorizer resolved the caller's key.
function streamEvent(s: { caller: TestCaller; model: string; limits?: RateLimits | undefined }, project: string) {
  const init = jsonInit(
    { model: s.model, messages: [{ role: 'user', content: 'count with me' }], stream: true },
    { ...s.caller.bearer, 'OpenAI-Project': `${s.caller.entity}/${project}` },
  )
  return restEvent({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: init.headers as Record<string, string>,
    body: init.body as string,
    authorizer: principalToAuthorizerContext({
      userId: s.caller.userId,
      keyId: s.caller.keyId,
      entity: s.caller.entity,
      entities: [s.caller.entity],
      ...(s.limits === undefined ? {} : { limits: s.limits }),
    }),
  })
}

const contentChunks = (text: string) =>
  sseChunks(text).filter((c) => (c.choices as { delta: { content?: string } }[])[0]?.delta.content)

describe('lambdaStreamHandler when the client disconnects mid-stream', () => {
  it('aborts the upstream request, meters the tokens generated so far, and resolves', async () => {
    // Prepare
    const s = await setup()
    const project = `disconnect-${randomUUID().slice(0, 8)}`
    upstream.behave(SLOW)
    const before = upstream.seen.length
    const client = lambdaResponseStream()
    const invocation = invoke(streamEvent(s, project), client.stream, lambdaContext())
    const received = await client.until((text) => contentChunks(text).length >= 3)

    // Act
    client.disconnect()
    await invocation
    const seen = upstream.seen[before]
    await seen?.closed
    const counters = await listUsage(s.caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()))

    // Assess
    expect(upstream.seen.length - before).toBe(1)
    expect(seen?.closedEarly).toBe(true)
    expect(counters).toEqual([
      expect.objectContaining({
        project,
        model: s.model,
        requests: 1,
        abortedRequests: 1,
        promptTokens: promptTokensOf(seen?.body ?? {}),
      }),
    ])
    expect(counters[0]?.completionTokens).toBeGreaterThanOrEqual(contentChunks(received).length)
    expect(counters[0]?.completionTokens).toBeLessThan(TOKENS)
  })

  it('cancels the completion of a client gone before the response began', async () => {
    // Prepare
    const s = await setup()
    const project = `gone-${randomUUID().slice(0, 8)}`
    upstream.behave(SLOW)
    const before = upstream.seen.length
    const client = lambdaResponseStream()

    // Act: the client leaves while the handler is still authenticating, before its response exists.
    const invocation = invoke(streamEvent(s, project), client.stream, lambdaContext())
    client.disconnect()
    await invocation
    const seen = upstream.seen[before]
    await seen?.closed
    const counters = await listUsage(s.caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()))

    // Assess
    expect(seen?.closedEarly).toBe(true)
    expect(client.text()).toBe('')
    expect(counters).toEqual([expect.objectContaining({ project, requests: 1, abortedRequests: 1 })])
    expect(counters[0]?.completionTokens).toBeLessThan(TOKENS)
  })

  it("frees a key's concurrency slot, so its next stream starts at once", async () => {
    // Prepare
    const s = await setup({ concurrency: 1 })
    upstream.behave(SLOW)
    const first = lambdaResponseStream()
    const held = invoke(streamEvent(s, 'held'), first.stream, lambdaContext())
    await first.until((text) => contentChunks(text).length >= 1)

    // Act
    first.disconnect()
    await held
    upstream.behave({})
    const next = lambdaResponseStream()
    await invoke(streamEvent(s, 'next'), next.stream, lambdaContext())

    // Assess
    expect(next.text()).not.toContain('Concurrency limit reached')
    expect(next.text().endsWith('data: [DONE]\n\n')).toBe(true)
  })
})

describe('lambdaStreamHandler with a JSON answer (the streamed tracing reads)', () => {
  // obj/read, streamed (`stream: true`), behind the REST authorizer.
  const objRead = (who: TestCaller, body: unknown, authorization = who.basic.authorization) =>
    invokeLambda(
      readObjHandler,
      restEvent({
        method: 'POST',
        path: '/obj/read',
        headers: { 'content-type': 'application/json', authorization },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        authorizer: authorizerFor(who),
      }),
    )

  it("answers through the prelude the status, headers and body the app's family gives, principal from the authorizer", async () => {
    // Prepare
    const owner = await newProjectCaller()
    const stranger = await newCaller()
    const digest = await publish(owner, 'o', { v: 1.0 })
    const read = { project_id: owner.project, object_id: 'o', digest }

    // Act: the key in the header is not looked up behind the authorizer, whose context names the principal.
    const found = await objRead(owner, read, `Basic ${Buffer.from('api:not-a-key').toString('base64')}`)
    const refused = await objRead(stranger, read)
    const missing = await objRead(owner, { ...read, object_id: 'nope' })
    const malformed = await objRead(owner, '{"project_id":')

    // Assess
    expect(found).toMatchObject({ streamed: true, statusCode: 200 })
    expect(found.headers).toMatchObject({ 'content-type': 'application/json', 'x-request-id': 'lambda-req-1' })
    expect(JSON.parse(found.body)).toMatchObject({ obj: { object_id: 'o', digest, val: { v: 1 } } })
    expect(refused).toMatchObject({ streamed: true, statusCode: 403 })
    expect(JSON.parse(refused.body)).toEqual({ reason: expect.any(String) })
    expect(missing).toMatchObject({ streamed: true, statusCode: 404 })
    expect(JSON.parse(missing.body)).toEqual({ reason: expect.stringContaining('not found') })
    expect(malformed).toMatchObject({ streamed: true, statusCode: 422 })
    expect(JSON.parse(malformed.body)).toMatchObject({ detail: [expect.objectContaining({ type: 'json_invalid' })] })
  })

  it('ends the invocation only once the work handed to afterResponse has settled', async () => {
    // Prepare
    let settled = false
    const app = createTracingApp().get('/work', (c) => {
      afterResponse(new Promise((resolve) => setTimeout(resolve, 50)).then(() => (settled = true)))
      return c.json({}, 200)
    })
    const caller = await newCaller()

    // Act
    const answer = await invokeLambda(
      lambdaStreamHandler(app),
      restEvent({ path: '/work', headers: caller.basic, authorizer: authorizerFor(caller) }),
    )

    // Assess
    expect(answer).toMatchObject({ streamed: true, statusCode: 200, body: '{}' })
    expect(settled).toBe(true)
  })
})
