import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics'
import type { Context, MiddlewareHandler, Next } from 'hono'
import { config } from '#shared/config'
import type { AppEnv } from '#shared/http/app-env'

/** The metrics a request may add to its invocation's EMF record. */
export type RequestMetricName = 'PromptTokens' | 'CompletionTokens' | 'GatewayOverhead'

let instance: Metrics | undefined

// Created on first use, so a test or the local server can switch metrics on through `config` before it.
function store(): Metrics | undefined {
  if (!config.metrics.enabled) return undefined
  instance ??= new Metrics({ namespace: config.metrics.namespace, serviceName: config.metrics.service })
  return instance
}

/** Adds a count or a duration (ms) to the current invocation's record; a no-op while metrics are off. */
export function addRequestMetric(name: RequestMetricName, value: number): void {
  store()?.addMetric(name, name === 'GatewayOverhead' ? MetricUnit.Milliseconds : MetricUnit.Count, value)
}

/**
 * Writes the invocation's EMF record (one stdout line) and clears it; `latencyMs` is added first when given. The
 * streaming Lambda handler calls it once the response stream has ended.
 */
export function publishRequestMetrics(latencyMs?: number): void {
  const metrics = store()
  if (metrics === undefined || !metrics.hasStoredMetrics()) return
  if (latencyMs !== undefined) metrics.addMetric('Latency', MetricUnit.Milliseconds, latencyMs)
  metrics.publishStoredMetrics()
}

/**
 * Per-request metrics, one EMF record per invocation: `Requests`, `ClientErrors` (4xx) and `ServerErrors` (5xx) as
 * 0/1 counts (so their Average is a rate) and `Latency`, with the function id as `service` dimension. Costs one
 * config check per request while metrics are off (locally and in tests by default).
 */
export function requestMetrics(): MiddlewareHandler<AppEnv> {
  // Not async unless metrics are on: a middleware that only passes the request on costs no promise of its own.
  return function requestMetrics(c, next) {
    const metrics = store()
    return metrics === undefined ? next() : measured(c, next, metrics)
  }
}

async function measured(c: Context<AppEnv>, next: Next, metrics: Metrics): Promise<void> {
  const started = performance.now()
  await next()
  const status = c.res.status
  metrics.addMetric('Requests', MetricUnit.Count, 1)
  metrics.addMetric('ClientErrors', MetricUnit.Count, status >= 400 && status < 500 ? 1 : 0)
  metrics.addMetric('ServerErrors', MetricUnit.Count, status >= 500 ? 1 : 0)
  // Under `streamHandle` (which binds `context`) the body is still streaming: shared/http/lambda-stream.ts adds the
  // full latency and publishes once the stream has ended, so streamed token counts land in the same record.
  if (c.env?.context !== undefined) return
  publishRequestMetrics(performance.now() - started)
}
