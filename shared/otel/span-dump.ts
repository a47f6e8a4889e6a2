import { type AttrTree, attributeTree } from '#shared/otel/attribute-tree'
import {
  type AttrValue,
  type OtelResource,
  type OtelScope,
  type OtelSpan,
  SPAN_KINDS,
  STATUS_CODES,
} from '#shared/otel/otlp-model'

/**
 * An OTLP timestamp (nanoseconds since the epoch, an unsigned 64-bit integer, so at most in the year 2554) as an ISO
 * datetime with microseconds (`…:SS.ffffffZ`).
 */
export function nanosToIso(nanos: bigint): string {
  const seconds = nanos / 1_000_000_000n
  const micros = (nanos % 1_000_000_000n) / 1000n
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`
}

/** Where a span came from: its resource and instrumentation scope (their attribute trees built once per group). */
export type SpanOrigin = {
  resource: OtelResource
  resourceTree: AttrTree
  scope: OtelScope
  scopeTree: AttrTree
}

/**
 * The span as received, in the shape the reference keeps as `otel_dump` (returned as `attributes.otel_span`):
 * name, context, kind, parent, times, status, nested attributes, events and links, plus the resource and (Loom's
 * addition) the instrumentation scope.
 */
export function spanDump(span: OtelSpan, tree: AttrTree, parentId: string | null, origin: SpanOrigin) {
  const named = <T extends readonly string[]>(names: T, n: number) => names[n] ?? String(n)
  return {
    name: span.name,
    context: { trace_id: span.traceId, span_id: span.spanId, trace_state: span.traceState },
    kind: named(SPAN_KINDS, span.kind),
    parent_id: parentId,
    start_time: nanosToIso(span.startNanos),
    end_time: nanosToIso(span.endNanos),
    status: { code: named(STATUS_CODES, span.status.code), message: span.status.message },
    attributes: tree,
    dropped_attributes_count: span.droppedAttributesCount,
    events: span.events.map((e) => ({
      name: e.name,
      timestamp: e.timeNanos > 0n ? nanosToIso(e.timeNanos) : null,
      attributes: safeTree(e.attributes),
      dropped_attributes_count: e.droppedAttributesCount,
    })),
    dropped_events_count: span.droppedEventsCount,
    links: span.links.map((l) => ({
      trace_id: l.traceId,
      span_id: l.spanId,
      trace_state: l.traceState,
      attributes: safeTree(l.attributes),
      dropped_attributes_count: l.droppedAttributesCount,
      flags: l.flags,
    })),
    dropped_links_count: span.droppedLinksCount,
    resource: { attributes: origin.resourceTree, dropped_attributes_count: origin.resource.droppedAttributesCount },
    scope: {
      name: origin.scope.name,
      version: origin.scope.version,
      attributes: origin.scopeTree,
      dropped_attributes_count: origin.scope.droppedAttributesCount,
    },
  }
}

/** The attribute tree of an event, link, resource or scope; flat when its keys collide (they never fail a span). */
export function safeTree(pairs: [string, AttrValue][]): AttrTree {
  try {
    return attributeTree(pairs)
  } catch {
    return Object.fromEntries(pairs)
  }
}
