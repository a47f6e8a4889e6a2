/**
 * `npm run bench:otel`: spans per second through `POST /otel/v1/traces` (OTLP protobuf, batches of 512 spans as the
 * OpenTelemetry batch span processor sends them) against an in-process dynalite, next to the storage's own ceiling
 * measured in the same run on the same table: raw `BatchWriteItem` of the very items the endpoint writes for those
 * spans (start and end parts with their index keys), under other ids. Rounds alternate raw and endpoint so both see the
 * same background load. Prints a Markdown-ready summary for docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { cpus } from 'node:os'
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb'
import { context, trace } from '@opentelemetry/api'
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import dynalite from 'dynalite'
import { createApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { endRecord, startRecord } from '#shared/db/call-records'
import { db, table } from '#shared/db/client'
import { ensureTable } from '#shared/db/ensure-table'
import { planExport } from '#shared/otel/export-traces'
import { decodeProtobufRequest } from '#shared/otel/otlp-protobuf'
import { buildEnd, buildStart, endJson, startJson } from '#shared/tracing/call-build'
import { app } from '../functions/tracing/export-otel-traces/handler.js'

const ROUNDS = Number(process.env.BENCH_OTEL_ROUNDS ?? 8)
const BATCHES_PER_ROUND = Number(process.env.BENCH_OTEL_BATCHES ?? 4)
const BATCH_SPANS = 512
const SPANS_PER_TRACE = 8
const CONCURRENCY = 8

const now = () => performance.now()
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })

async function startDynalite() {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  return { endpoint: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) }
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++] as T)
    }),
  )
}

/**
 * `n` spans of an instrumented LLM app, recorded by the OpenTelemetry SDK: traces of one `agent.run` root and seven
 * children, every other child an LLM call with GenAI attributes (~1 KB: messages, model, usage), the rest tool calls.
 */
async function recordSpans(n: number): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'bench-agent', 'deployment.environment': 'bench' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
  const tracer = provider.getTracer('bench-instrumentation', '1.0.0')
  const t0 = Date.UTC(2025, 0, 1)
  for (let i = 0; i < n / SPANS_PER_TRACE; i++) {
    const root = tracer.startSpan('agent.run', { startTime: new Date(t0 + i * 1000) })
    const ctx = trace.setSpan(context.active(), root)
    for (let j = 1; j < SPANS_PER_TRACE; j++) {
      const start = new Date(t0 + i * 1000 + j * 100)
      const llm = j % 2 === 1
      const child = tracer.startSpan(
        llm ? 'chat gpt-4o' : 'execute_tool search',
        {
          startTime: start,
          attributes: llm
            ? {
                'gen_ai.operation.name': 'chat',
                'gen_ai.provider.name': 'openai',
                'gen_ai.request.model': 'gpt-4o',
                'gen_ai.response.model': 'gpt-4o',
                'gen_ai.input.messages': JSON.stringify([
                  { role: 'system', parts: [{ type: 'text', content: 'You are a helpful agent. '.repeat(8) }] },
                  { role: 'user', parts: [{ type: 'text', content: `question ${i}: ${'lorem ipsum '.repeat(20)}` }] },
                ]),
                'gen_ai.output.messages': JSON.stringify([
                  { role: 'assistant', parts: [{ type: 'text', content: 'dolor sit amet '.repeat(15) }] },
                ]),
                'gen_ai.usage.input_tokens': 180,
                'gen_ai.usage.output_tokens': 45,
              }
            : { 'gen_ai.tool.name': 'search', 'input.value': `query ${i}.${j}`, 'output.value': 'result '.repeat(10) },
        },
        ctx,
      )
      child.end(new Date(start.getTime() + 80))
    }
    root.end(new Date(t0 + i * 1000 + 900))
  }
  await provider.forceFlush()
  const spans = exporter.getFinishedSpans()
  await provider.shutdown()
  return spans
}

async function rawWrite(items: Record<string, unknown>[]): Promise<number> {
  const chunks: Record<string, unknown>[][] = []
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25))
  const t0 = now()
  await pool(chunks, CONCURRENCY, async (chunk) => {
    let requests = chunk.map((Item) => ({ PutRequest: { Item } }))
    while (requests.length > 0) {
      const res = await db().send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }))
      requests = (res.UnprocessedItems?.[table()] ?? []) as typeof requests
    }
  })
  return (now() - t0) / 1000
}

async function main() {
  const dynamo = await startDynalite()
  config.dynamoEndpoint = dynamo.endpoint
  config.tableName = `loom-bench-${randomUUID().slice(0, 8)}`
  await ensureTable(config.tableName)
  const { key, record } = await createApiKey({ userId: 'bench-user', entity: 'bench' })
  const principal = { userId: record.userId, keyId: record.keyId, entity: 'bench', entities: ['bench'] }
  const authorization = `Basic ${Buffer.from(`api:${key}`).toString('base64')}`
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  const out: string[] = []
  const log = (line: string) => {
    out.push(line)
    process.stderr.write(`${line}\n`)
  }
  log(`Run: ${new Date().toISOString()}, Node ${process.version}, ${cpu} (${cpus().length} cores), dynalite in-process`)

  const perRound = BATCHES_PER_ROUND * BATCH_SPANS
  const spans = await recordSpans(perRound * ROUNDS * 2)
  const bodies: Uint8Array[] = []
  for (let i = 0; i < spans.length; i += BATCH_SPANS) {
    bodies.push(ProtobufTraceSerializer.serializeRequest(spans.slice(i, i + BATCH_SPANS)) as Uint8Array)
  }
  const jsonBytes = (JsonTraceSerializer.serializeRequest(spans.slice(0, BATCH_SPANS)) as Uint8Array).length
  log(
    `Spans: ${fmt(spans.length)} recorded by the OTel SDK, ${SPANS_PER_TRACE} per trace; a 512-span request is ` +
      `${fmt((bodies[0]?.length ?? 0) / 1024)} KB as protobuf (${fmt(jsonBytes / 1024)} KB as OTLP/JSON)`,
  )

  // The items the endpoint writes for a batch, built by the same code, for the raw ceiling (other project, so the
  // writes are as fresh as the endpoint's).
  const itemsOf = async (body: Uint8Array, project: string) => {
    const { calls } = planExport(principal, decodeProtobufRequest(body), project)
    const items: Record<string, unknown>[] = []
    for (const c of calls) {
      items.push(startRecord(await buildStart(c.start, startJson(c.start), principal.userId)))
      items.push(endRecord(await buildEnd(c.end, endJson(c.end), c.end.trace_id ?? undefined)))
    }
    return items
  }

  // CPU cost of decoding and mapping alone (no I/O): what the endpoint spends before DynamoDB.
  const t = now()
  for (const body of bodies.slice(0, 8)) planExport(principal, decodeProtobufRequest(body), 'bench/cpu')
  const mapRate = (8 * BATCH_SPANS) / ((now() - t) / 1000)

  let rawSeconds = 0
  let rawItems = 0
  let ingestSeconds = 0
  let ingestSpans = 0
  const ratios: number[] = []
  const latencies: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const rawBodies = bodies.slice(round * 2 * BATCHES_PER_ROUND, (round * 2 + 1) * BATCHES_PER_ROUND)
    const ingestBodies = bodies.slice((round * 2 + 1) * BATCHES_PER_ROUND, (round * 2 + 2) * BATCHES_PER_ROUND)
    const items = (await Promise.all(rawBodies.map((b) => itemsOf(b, 'bench/raw')))).flat()
    const raw = await rawWrite(items)
    rawSeconds += raw
    rawItems += items.length
    const project = `bench/otel-${round}`
    const t0 = now()
    await pool(ingestBodies, CONCURRENCY, async (body) => {
      const t1 = now()
      const res = await app.request('/otel/v1/traces', {
        method: 'POST',
        headers: { authorization, project_id: project, 'content-type': 'application/x-protobuf' },
        body,
      })
      if (res.status !== 200) throw new Error(`export ${res.status}: ${await res.text()}`)
      await res.arrayBuffer()
      latencies.push(now() - t1)
    })
    const seconds = (now() - t0) / 1000
    ingestSeconds += seconds
    ingestSpans += ingestBodies.length * BATCH_SPANS
    // Items per second both ways: each span is two items (start and end part).
    ratios.push((2 * ingestBodies.length * BATCH_SPANS) / seconds / (items.length / raw))
  }
  const rawRate = rawItems / rawSeconds
  const spanRate = ingestSpans / ingestSeconds
  log(
    `raw BatchWriteItem of the same items: ${fmt(rawRate)} items/s = ${fmt(rawRate / 2)} spans/s (${fmt(rawItems)} items)`,
  )
  log(
    `POST /otel/v1/traces: ${fmt(spanRate)} spans/s = ${fmt(2 * spanRate)} item writes/s (${fmt(ingestSpans)} spans, ` +
      `${CONCURRENCY} requests of ${BATCH_SPANS} spans in flight) = ${fmt((100 * 2 * spanRate) / rawRate, 1)}% of the ` +
      `raw ceiling; median of ${ROUNDS} interleaved rounds ${fmt(100 * median(ratios), 0)}% ` +
      `(per round: ${ratios.map((r) => `${fmt(100 * r, 0)}%`).join(', ')}); request latency median ` +
      `${fmt(median(latencies))} ms`,
  )
  log(`decode + map only (no I/O): ${fmt(mapRate)} spans/s`)
  await dynamo.close()
  process.stdout.write(`${out.join('\n')}\n`)
}

await main()
