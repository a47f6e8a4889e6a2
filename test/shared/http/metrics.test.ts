import '../../support/lambda-shim.js'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { app as chatApp, handler as chatHandler } from '#functions/inference/create-chat-completion/handler'
import { app as healthApp, handler as healthHandler } from '#functions/meta/get-health/handler'
import { app as readObjApp, handler as readObjHandler } from '#functions/tracing/read-obj/handler'
import { config } from '#shared/config'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { createPublicApp } from '#shared/http/create-app'
import { jsonInit } from '../../support/auth.js'
import { authorizerFor } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { invokeLambda } from '../../support/lambda-invoke.js'
import { upstreamModelFixture } from '../../support/models.js'
import { captureStdout } from '../../support/stdout.js'

type EmfRecord = {
  _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[]
  }
  service: string
} & Record<string, unknown>

const { caller, model } = await upstreamModelFixture()
let written: string[]

// Powertools writes EMF records through its own Console on process.stdout, so the records are read there.
beforeEach(() => {
  written = captureStdout()
  config.metrics.enabled = true
})

afterEach(() => {
  config.metrics.enabled = false
  vi.mocked(process.stdout.write).mockRestore()
})

function records(): EmfRecord[] {
  return written
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as EmfRecord)
}

function metricNames(record: EmfRecord): string[] {
  return (record._aws.CloudWatchMetrics[0]?.Metrics ?? []).map((m) => m.Name).sort()
}

describe('request metrics (EMF)', () => {
  it('writes one record per request with the request count, error counts and latency', async () => {
    // Act
    const res = await healthApp.request('/health')

    // Assess
    expect(res.status).toBe(200)
    const [record, ...rest] = records()
    expect(rest).toHaveLength(0)
    expect(record?._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Loom', Dimensions: [['service']] })
    expect(record?.service).toBe(config.metrics.service)
    expect(record).toMatchObject({ Requests: 1, ClientErrors: 0, ServerErrors: 0 })
    expect(record?.Latency).toBeTypeOf('number')
    expect(record?._aws.CloudWatchMetrics[0]?.Metrics).toContainEqual({ Name: 'Latency', Unit: 'Milliseconds' })
  })

  it('counts a request the auth middleware rejects as a client error', async () => {
    // Act
    const res = await readObjApp.request('/obj/read', jsonInit({}, {}))

    // Assess
    expect(res.status).toBe(401)
    expect(records()).toEqual([expect.objectContaining({ Requests: 1, ClientErrors: 1, ServerErrors: 0 })])
  })

  it('counts an unexpected error answered 500 as a server error', async () => {
    // Prepare
    const app = createPublicApp().get('/boom', () => {
      throw new Error('boom')
    })

    // Act
    const res = await app.request('/boom')

    // Assess
    expect(res.status).toBe(500)
    expect(records()).toEqual([expect.objectContaining({ Requests: 1, ClientErrors: 0, ServerErrors: 1 })])
  })

  it('adds prompt and completion tokens and the gateway overhead for a chat completion', async () => {
    // Act
    const res = await chatApp.request(
      '/v1/chat/completions',
      jsonInit({ model, messages: [{ role: 'user', content: 'count these words' }] }, caller.bearer),
    )

    // Assess
    expect(res.status).toBe(200)
    const usage = ((await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage
    const [record] = records()
    expect(record).toMatchObject({
      Requests: 1,
      PromptTokens: usage.prompt_tokens,
      CompletionTokens: usage.completion_tokens,
    })
    expect(record?.GatewayOverhead).toBeTypeOf('number')
  })

  it('publishes a streamed completion once its stream ended, tokens and full latency in the same record', async () => {
    // Prepare
    const init = jsonInit({ model, messages: [{ role: 'user', content: 'three streamed words' }], stream: true }, {})
    const event = restEvent({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { ...(init.headers as Record<string, string>), ...caller.bearer },
      body: init.body as string,
      authorizer: principalToAuthorizerContext({
        userId: caller.userId,
        keyId: caller.keyId,
        entity: caller.entity,
        entities: [caller.entity],
      }),
    })
    const stream = new PassThrough()
    let text = ''
    stream.on('data', (piece: Buffer) => {
      text += String(piece)
    })
    type StreamingHandler = (event: unknown, stream: PassThrough, context: unknown) => Promise<void>

    // Act
    await (chatHandler as unknown as StreamingHandler)(event, stream, lambdaContext())

    // Assess
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
    const [record, ...rest] = records()
    expect(rest).toHaveLength(0)
    expect(metricNames(record as EmfRecord)).toEqual([
      'ClientErrors',
      'CompletionTokens',
      'GatewayOverhead',
      'Latency',
      'PromptTokens',
      'Requests',
      'ServerErrors',
    ])
    expect(record).toMatchObject({ Requests: 1, CompletionTokens: 3, ServerErrors: 0 })
  })

  it('publishes a streamed JSON read once, when its stream has ended, its 4xx counted', async () => {
    // Prepare: obj/read streams its answer (`stream: true`); an object that does not exist is a 404.
    const event = restEvent({
      method: 'POST',
      path: '/obj/read',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: `${caller.entity}/metrics`, object_id: 'nope', digest: 'latest' }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const answer = await invokeLambda(readObjHandler, event)

    // Assess
    expect(answer).toMatchObject({ streamed: true, statusCode: 404 })
    const [record, ...rest] = records()
    expect(rest).toHaveLength(0)
    expect(metricNames(record as EmfRecord)).toEqual(['ClientErrors', 'Latency', 'Requests', 'ServerErrors'])
    expect(record).toMatchObject({ Requests: 1, ClientErrors: 1, ServerErrors: 0 })
  })

  it('publishes from the buffered Lambda handler before it returns', async () => {
    // Act
    const result = (await healthHandler(restEvent({ path: '/health' }), lambdaContext())) as { statusCode: number }

    // Assess
    expect(result.statusCode).toBe(200)
    expect(records()).toEqual([expect.objectContaining({ Requests: 1, ServerErrors: 0 })])
  })

  it('writes nothing while metrics are off', async () => {
    // Prepare
    config.metrics.enabled = false

    // Act
    const res = await healthApp.request('/health')

    // Assess
    expect(res.status).toBe(200)
    expect(records()).toEqual([])
  })
})
