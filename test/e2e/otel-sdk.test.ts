import type { AddressInfo } from 'node:net'
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai'
import { type ServerType, serve } from '@hono/node-server'
import { SpanStatusCode, type Tracer } from '@opentelemetry/api'
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { clearCatalogCache } from '#shared/inference/catalog'
import { createLocalApp } from '../../scripts/local/app.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { newProject } from '../support/calls.js'
import { under } from '../support/otel.js'

/**
 * Real OpenTelemetry clients against the local stack over loopback HTTP: the Node SDK with the OTLP protobuf and
 * OTLP/JSON exporters, and the `openai` SDK instrumented by OpenInference calling Loom's own chat completions.
 */

let server: ServerType
let base: string
let caller: TestCaller

beforeAll(async () => {
  caller = await newCaller()
  await putModel(referenceCatalogModel())
  clearCatalogCache()
  const app = await createLocalApp()
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
  })
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

beforeEach(() => {
  vi.unstubAllEnvs()
})

// biome-ignore lint/suspicious/noExplicitAny: calls are checked field by field by the assertions.
type Call = any

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...caller.basic, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

async function calls(project: string): Promise<Call[]> {
  const res = await post('/calls/stream_query', { project_id: project })
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
}

/** A provider exporting every span at once through `exporter`, under a `service.name` resource. */
function providerFor(exporter: SpanExporter): NodeTracerProvider {
  return new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'otel-e2e' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
}

function agentRun(tracer: Tracer): void {
  const root = tracer.startSpan('agent.run')
  const step = tracer.startSpan('agent.step', {}, under(root))
  const tool = tracer.startSpan('tool.lookup', { attributes: { 'input.value': 'weather in Paris' } }, under(step))
  tool.setAttribute('output.value', 'sunny')
  tool.end()
  step.setStatus({ code: SpanStatusCode.ERROR, message: 'step gave up' })
  step.end()
  root.end()
}

function expectTree(stored: Call[]): void {
  const byName = new Map(stored.map((c) => [c.op_name, c]))
  const [root, step, tool] = ['agent.run', 'agent.step', 'tool.lookup'].map((n) => byName.get(n))
  expect(stored).toHaveLength(3)
  expect(root.parent_id).toBeNull()
  expect(step.parent_id).toBe(root.id)
  expect(tool.parent_id).toBe(step.id)
  expect(new Set(stored.map((c) => c.trace_id)).size).toBe(1)
  expect(step.exception).toBe('step gave up')
  expect(tool.inputs).toEqual({ 'input.value': 'weather in Paris' })
  expect(tool.output).toEqual({ 'output.value': 'sunny' })
  expect(root.attributes.otel_span.resource.attributes.service.name).toBe('otel-e2e')
}

describe('OpenTelemetry SDK exporters against the local stack', () => {
  it('exports nested spans with the OTLP protobuf exporter configured by the README environment variables', async () => {
    // Prepare
    const project = newProject(caller)
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', `${base}/otel/v1/traces`)
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_HEADERS', `Authorization=Bearer%20${caller.key},project_id=${project}`)
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'gzip')
    const provider = providerFor(new ProtoExporter())

    // Act
    agentRun(provider.getTracer('e2e'))
    await provider.forceFlush()
    await provider.shutdown()

    // Assess
    expectTree(await calls(project))
  })

  it('exports nested spans with the OTLP/JSON exporter', async () => {
    // Prepare
    const project = newProject(caller)
    const exporter = new HttpJsonExporter({
      url: `${base}/otel/v1/traces`,
      headers: { ...caller.basic, project_id: project },
    })
    const provider = providerFor(exporter)

    // Act
    agentRun(provider.getTracer('e2e'))
    await provider.forceFlush()
    await provider.shutdown()

    // Assess
    expectTree(await calls(project))
  })
})

describe('an OpenInference-instrumented openai client calling Loom', () => {
  it('exports the chat completion span with model, messages and token usage, and trace/usage prices it', async () => {
    // Prepare
    const project = newProject(caller)
    const provider = providerFor(
      new ProtoExporter({ url: `${base}/otel/v1/traces`, headers: { ...caller.basic, project_id: project } }),
    )
    const instrumentation = new OpenAIInstrumentation({ tracerProvider: provider })
    instrumentation.manuallyInstrument(OpenAI)
    // Loom-Trace: off keeps the gateway's own trace of the completion out of the way; the span is the record here.
    const client = new OpenAI({
      apiKey: caller.key,
      baseURL: `${base}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'Loom-Trace': 'off' },
    })
    const messages = [{ role: 'user' as const, content: 'Say hello to the tracer' }]

    // Act
    const completion = await client.chat.completions.create({ model: 'loom/reference-1', messages, max_tokens: 8 })
    await provider.forceFlush()
    instrumentation.disable()
    await provider.shutdown()
    const prices = await post('/cost/create', {
      project_id: project,
      costs: { 'loom/reference-1': { prompt_token_cost: 0.001, completion_token_cost: 0.002 } },
    })
    const usage = await post('/trace/usage', { project_id: project, include_costs: true })

    // Assess
    const [span, ...others] = await calls(project)
    expect(others).toHaveLength(0)
    expect(span.attributes).toMatchObject({ model: 'loom/reference-1', kind: 'LLM', system: 'openai' })
    const sent = span.inputs['input.value']
    expect(sent).toMatchObject({ model: 'loom/reference-1', messages })
    // Compared as values: the content may hold quotes, which a JSON string of the output escapes.
    expect(span.output).toMatchObject({
      'output.value': { choices: [{ message: { content: completion.choices[0]?.message.content } }] },
    })
    const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details } = completion.usage ?? {}
    // Prompt tokens the reference engine found in its prefix cache (vLLM's `cached_tokens`) are exported by the
    // instrumentation as cache reads, when there are any.
    const cached = prompt_tokens_details?.cached_tokens ?? 0
    const cacheRead = cached > 0 ? { cache_read_input_tokens: cached } : {}
    expect(span.summary.usage).toEqual({
      'loom/reference-1': { prompt_tokens, completion_tokens, total_tokens, ...cacheRead },
    })
    expect(prices.status).toBe(200)
    expect(usage.status).toBe(200)
    const rolled = ((await usage.json()) as Call).call_usage[span.id]['loom/reference-1']
    expect(rolled).toMatchObject({ prompt_tokens, completion_tokens, total_tokens })
    // Cache reads are priced apart (no cache-read price was set here): the prompt price covers the rest.
    expect(rolled.prompt_tokens_total_cost).toBeCloseTo(((prompt_tokens ?? 0) - cached) * 0.001, 10)
    expect(rolled.completion_tokens_total_cost).toBeCloseTo((completion_tokens ?? 0) * 0.002, 10)
  })
})
