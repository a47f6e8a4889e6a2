import '../../support/lambda-shim.js'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { handler as chatHandler } from '#functions/inference/create-chat-completion/handler'
import { handler as usageHandler } from '#functions/inference/get-usage/handler'
import { app as queryStatsApp } from '#functions/tracing/query-call-stats/handler'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { jsonInit, newCaller } from '../../support/auth.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { upstreamModelFixture } from '../../support/models.js'
import { sseChunks } from '../../support/sse.js'

const { caller, model } = await upstreamModelFixture()

// Behind API Gateway the REQUEST authorizer has resolved the key and passes the principal in the context.
const authorizer = () =>
  principalToAuthorizerContext({
    userId: caller.userId,
    keyId: caller.keyId,
    entity: caller.entity,
    entities: [caller.entity],
  })

// A chat-completions REST event as API Gateway sends it once the authorizer resolved the caller's key.
function chatEvent(body: unknown, headers: Record<string, string> = {}) {
  const init = jsonInit(body, { ...caller.bearer, ...headers })
  return restEvent({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: init.headers as Record<string, string>,
    body: init.body as string,
    authorizer: authorizer(),
  })
}

type StreamingHandler = (event: unknown, stream: PassThrough, context: unknown) => Promise<void>

describe('inference Lambda handlers', () => {
  it('streams a chat completion through the response-streaming handler', async () => {
    // Prepare
    const event = chatEvent({ model, messages: [{ role: 'user', content: 'from lambda' }], stream: true })
    const stream = new PassThrough()
    let text = ''
    stream.on('data', (piece: Buffer) => {
      text += String(piece)
    })

    // Act
    await (chatHandler as unknown as StreamingHandler)(event, stream, lambdaContext())

    // Assess
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
    expect(
      sseChunks(text)
        .map((c) => (c.choices as { delta: { content?: string } }[])[0]?.delta.content ?? '')
        .join(''),
    ).toBe('from lambda')
  })

  it('has the trace of a non-streamed completion written when the invocation ends, not after', async () => {
    // Prepare
    const projectId = `${caller.entity}/lambda-traced-${Date.now()}`
    const event = chatEvent(
      { model, messages: [{ role: 'user', content: 'trace in lambda' }] },
      { 'OpenAI-Project': projectId },
    )
    const stream = new PassThrough()
    const pieces: Buffer[] = []
    stream.on('data', (piece: Buffer) => pieces.push(piece))

    // Act: read the project's calls the moment the handler resolves (a frozen Lambda would run nothing later).
    await (chatHandler as unknown as StreamingHandler)(event, stream, lambdaContext())
    const stats = await queryStatsApp.request(
      '/calls/query_stats',
      jsonInit({ project_id: projectId, filter: { op_names: [] } }, caller.basic),
    )

    // Assess
    const body = JSON.parse(String(Buffer.concat(pieces))) as { id: string }
    expect(body.id).toMatch(/^chatcmpl-/)
    expect(await stats.json()).toMatchObject({ count: 1 })
  })

  it('answers GET /v1/usage through the buffered handler', async () => {
    const event = restEvent({
      method: 'GET',
      path: '/v1/usage',
      headers: caller.bearer,
      query: { project: 'inference' },
      authorizer: authorizer(),
    })
    const result = (await usageHandler(event, lambdaContext())) as { statusCode: number; body: string }
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toMatchObject({ object: 'usage', project: `${caller.entity}/inference` })
  })

  it('enforces the key limits the authorizer context carries, without a look-up of its own', async () => {
    // Prepare
    const minute = 60_000 - (Date.now() % 60_000)
    if (minute < 5_000) await new Promise((resolve) => setTimeout(resolve, minute + 50))
    const limited = await newCaller(undefined, { rpm: 1 })
    const event = () =>
      restEvent({
        method: 'GET',
        path: '/v1/usage',
        headers: limited.bearer,
        authorizer: principalToAuthorizerContext({
          userId: limited.userId,
          keyId: limited.keyId,
          entity: limited.entity,
          entities: [limited.entity],
          limits: { rpm: 1 },
        }),
      })
    type Result = { statusCode: number; body: string; multiValueHeaders?: Record<string, string[]> }

    // Act
    const first = (await usageHandler(event(), lambdaContext())) as unknown as Result
    const refused = (await usageHandler(event(), lambdaContext())) as unknown as Result

    // Assess
    expect(first.statusCode).toBe(200)
    expect(refused.statusCode).toBe(429)
    expect(JSON.parse(refused.body)).toEqual({
      error: { message: 'Rate limit reached for requests', type: 'RateLimitError', param: null, code: 429 },
    })
    expect(refused.multiValueHeaders?.['retry-after']?.[0]).toMatch(/^\d+$/)
  })
})
