import { describe, expect, it } from 'vitest'
import { app } from '#functions/tracing/export-otel-traces/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { config } from '#shared/config'
import { UNAVAILABLE_MESSAGE } from '#shared/errors/error-response'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { newProject } from '../../support/calls.js'
import { type DynamoFaultProxy, useDynamoFaultProxy } from '../../support/dynamo-fault-proxy.js'
import { at, otlpInit, protobufBody, protobufResponse, recordSpans } from '../../support/otel.js'

let proxy: DynamoFaultProxy
useDynamoFaultProxy((started) => {
  proxy = started
})

async function count(caller: TestCaller, project: string): Promise<number> {
  const res = await statsApp.request('/calls/query_stats', jsonInit({ project_id: project }, caller.basic))
  return ((await res.json()) as { count: number }).count
}

const fiveSpans = () =>
  recordSpans((tracer) => {
    for (let i = 0; i < 5; i++) tracer.startSpan(`s${i}`, { startTime: at(i) }).end(at(i + 1))
  })

describe('POST /otel/v1/traces when DynamoDB throttles', () => {
  it('answers a retryable 503 with Retry-After, and the exporter retry stores each call once', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const body = protobufBody(await fiveSpans())
    proxy.inject({ fault: 'throttling', operations: ['BatchWriteItem'] })

    // Act
    const throttled = await app.request('/otel/v1/traces', otlpInit(body, caller, project))
    proxy.clear()
    const retried = await app.request('/otel/v1/traces', otlpInit(body, caller, project))

    // Assess
    expect(throttled.status).toBe(503)
    expect(throttled.headers.get('retry-after')).toBe(String(config.dynamo.retryAfterSeconds))
    expect(await throttled.json()).toEqual({ reason: UNAVAILABLE_MESSAGE })
    expect(retried.status).toBe(200)
    expect(protobufResponse(new Uint8Array(await retried.arrayBuffer()))).toEqual({})
    expect(await count(caller, project)).toBe(5)
  })

  it('stores each call once when a write was applied but its answer was lost', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const body = protobufBody(await fiveSpans())
    proxy.inject({ fault: 'drop-after-apply', operations: ['BatchWriteItem'], times: 1 })

    // Act
    const res = await app.request('/otel/v1/traces', otlpInit(body, caller, project))
    const again = await app.request('/otel/v1/traces', otlpInit(body, caller, project))

    // Assess
    expect([res.status, again.status]).toEqual([200, 200])
    expect(await count(caller, project)).toBe(5)
  })
})
