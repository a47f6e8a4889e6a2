import { gzipSync } from 'node:zlib'
import { type Context, context, type Span, type Tracer, trace } from '@opentelemetry/api'
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import type { TestCaller } from './auth.js'

/**
 * Real OpenTelemetry spans for endpoint tests: recorded by the SDK's own tracer (`@opentelemetry/sdk-trace-base`) and
 * encoded by the OTLP exporters' own serializers (`@opentelemetry/otlp-transformer`), so request bodies are what an
 * exporter sends, not hand-made bytes.
 */

/** Records the spans `build` creates with a tracer of scope `test-scope@1.2.3` under the given resource attributes. */
export async function recordSpans(
  build: (tracer: Tracer) => void,
  resource: Record<string, string> = { 'service.name': 'otel-test' },
): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
  build(provider.getTracer('test-scope', '1.2.3'))
  await provider.forceFlush()
  const spans = exporter.getFinishedSpans()
  await provider.shutdown()
  return spans
}

/** The context whose active span is `parent` (no context manager needed). */
export const under = (parent: Span): Context => trace.setSpan(context.active(), parent)

/** Fixed start and end times (ms since the epoch) for a span. */
export const at = (ms: number) => new Date(Date.UTC(2025, 0, 2, 3, 4, 5) + ms)

/** An OTLP protobuf `ExportTraceServiceRequest` of the spans, as `exporter-trace-otlp-proto` sends it. */
export const protobufBody = (spans: ReadableSpan[]): Uint8Array =>
  ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array

/** An OTLP/JSON `ExportTraceServiceRequest` of the spans, as `exporter-trace-otlp-http` sends it. */
export const jsonBody = (spans: ReadableSpan[]): string =>
  new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans) as Uint8Array)

/** Request init for `app.request('/otel/v1/traces', …)`: the caller's Basic credentials and the project header. */
export function otlpInit(
  body: Uint8Array | string,
  caller: TestCaller,
  project: string | undefined,
  options: { contentType?: string; gzip?: boolean; headers?: Record<string, string> } = {},
): RequestInit {
  const contentType = options.contentType ?? (typeof body === 'string' ? 'application/json' : 'application/x-protobuf')
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body)
  const headers: Record<string, string> = { 'content-type': contentType, ...caller.basic, ...options.headers }
  if (project !== undefined) headers.project_id = project
  if (options.gzip) headers['content-encoding'] = 'gzip'
  return { method: 'POST', headers, body: options.gzip ? gzipSync(bytes) : bytes }
}

/** Decodes a protobuf `ExportTraceServiceResponse` with the exporters' own deserializer. */
export const protobufResponse = (bytes: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(bytes)

/** The hex ids of a recorded span. */
export const idsOf = (span: ReadableSpan) => ({
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
})
