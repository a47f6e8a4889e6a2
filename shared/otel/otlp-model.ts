/**
 * One decoded OTLP trace export, the same whichever encoding it came in (protobuf or OTLP/JSON): ids as lowercase hex
 * (unchecked: a span with a malformed id is rejected later, on its own), times as nanosecond `bigint`s, attributes as
 * key/value pairs in the order they were sent.
 */

/** An attribute value: OTLP's `AnyValue` as JSON (bytes as base64, 64-bit integers past 2^53 as decimal strings). */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue }

/** Nesting allowed inside one attribute value (arrays and key/value lists); deeper is an undecodable request. */
export const MAX_VALUE_DEPTH = 64

/**
 * A double as the reference stores it: NaN and the infinities as Python's `str(float)` writes them (`"nan"`, `"inf"`,
 * `"-inf"`, its `to_json_serializable`), since JSON has no number for them; finite values as they are.
 */
export function doubleValue(n: number): number | string {
  if (Number.isFinite(n)) return n
  return Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf'
}

/** Attributes as sent: `[key, value]` pairs. */
export type KeyValues = [string, AttrValue][]

/** A span event. */
export type OtelEvent = { timeNanos: bigint; name: string; attributes: KeyValues; droppedAttributesCount: number }

/** A link to another span. */
export type OtelLink = {
  traceId: string
  spanId: string
  traceState: string
  attributes: KeyValues
  droppedAttributesCount: number
  flags: number
}

/** A span as exported. */
export type OtelSpan = {
  traceId: string
  spanId: string
  /** `''` when the span has no parent. */
  parentSpanId: string
  traceState: string
  flags: number
  name: string
  kind: number
  startNanos: bigint
  endNanos: bigint
  attributes: KeyValues
  /**
   * Keys of `attributes` whose (last) value was an OTLP integer (`intValue`). `AttrValue` keeps an integer as a number,
   * or past 2^53 as decimal text, so it cannot tell one from a double or from text; Weave reads Langfuse times by it.
   */
  intKeys: ReadonlySet<string>
  droppedAttributesCount: number
  events: OtelEvent[]
  droppedEventsCount: number
  links: OtelLink[]
  droppedLinksCount: number
  status: { code: number; message: string }
}

/** The instrumentation scope of a group of spans. */
export type OtelScope = { name: string; version: string; attributes: KeyValues; droppedAttributesCount: number }

/** The resource (service, host, SDK, …) that produced a group of spans. */
export type OtelResource = { attributes: KeyValues; droppedAttributesCount: number }

/** `ResourceSpans`: one resource's spans, grouped by scope. */
export type OtelResourceSpans = {
  resource: OtelResource
  schemaUrl: string
  scopeSpans: { scope: OtelScope; schemaUrl: string; spans: OtelSpan[] }[]
}

/** Span kinds by their OTLP number (`SPAN_KIND_*`). */
export const SPAN_KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'] as const

/** Status codes by their OTLP number (`STATUS_CODE_*`). */
export const STATUS_CODES = ['UNSET', 'OK', 'ERROR'] as const

/** The status code of an error span. */
export const STATUS_ERROR = 2

/** Counts the spans of an export. */
export function countSpans(resourceSpans: readonly OtelResourceSpans[]): number {
  let n = 0
  for (const rs of resourceSpans) for (const ss of rs.scopeSpans) n += ss.spans.length
  return n
}
