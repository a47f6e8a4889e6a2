import { BadRequestError } from '#shared/errors/http-error'
import {
  type AttrValue,
  doubleValue,
  type KeyValues,
  MAX_VALUE_DEPTH,
  type OtelResourceSpans,
  type OtelScope,
  type OtelSpan,
} from '#shared/otel/otlp-model'
import { EXPORT_REQUEST, EXPORT_RESPONSE } from '#shared/otel/otlp-proto'

// What protobuf.js hands back for a decoded message: plain fields, 64-bit integers as `Long` (or numbers when small).
// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf.js messages are untyped; every field is read defensively.
type Decoded = any

const hex = (bytes: Uint8Array | undefined) =>
  bytes === undefined || bytes.length === 0
    ? ''
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex')

/** An unsigned 64-bit field (`fixed64`) as a bigint; protobuf.js gives a `Long`, or a number when it fits. */
function nanos(value: Decoded): bigint {
  if (value === undefined || value === null) return 0n
  if (typeof value === 'number') return BigInt(value)
  return BigInt.asUintN(64, BigInt(value.toString()))
}

// A signed 64-bit attribute value: a number when exact, else its decimal text (JSON numbers are doubles).
function int64(value: Decoded): number | string {
  if (typeof value === 'number') return value
  const big = BigInt(value.toString())
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : String(big)
}

function anyValue(v: Decoded, depth: number): AttrValue {
  if (v === undefined || v === null) return null
  if (depth > MAX_VALUE_DEPTH) throw new BadRequestError(`Attribute values nest deeper than ${MAX_VALUE_DEPTH} levels`)
  if (Object.hasOwn(v, 'stringValue')) return v.stringValue
  if (Object.hasOwn(v, 'boolValue')) return v.boolValue
  if (Object.hasOwn(v, 'intValue')) return int64(v.intValue)
  if (Object.hasOwn(v, 'doubleValue')) return doubleValue(v.doubleValue)
  if (Object.hasOwn(v, 'arrayValue')) return (v.arrayValue.values ?? []).map((x: Decoded) => anyValue(x, depth + 1))
  if (Object.hasOwn(v, 'kvlistValue')) return Object.fromEntries(keyValues(v.kvlistValue.values, depth + 1))
  if (Object.hasOwn(v, 'bytesValue')) return Buffer.from(v.bytesValue).toString('base64')
  return null
}

function keyValues(list: Decoded[] | undefined, depth = 0): KeyValues {
  return (list ?? []).map((kv: Decoded): [string, AttrValue] => [kv.key ?? '', anyValue(kv.value, depth)])
}

// Whether an AnyValue holds an integer: its `intValue` is the member anyValue reads.
const holdsInt = (v: Decoded): boolean =>
  v !== undefined &&
  v !== null &&
  !Object.hasOwn(v, 'stringValue') &&
  !Object.hasOwn(v, 'boolValue') &&
  Object.hasOwn(v, 'intValue')

function intKeys(list: Decoded[] | undefined): Set<string> {
  const keys = new Set<string>()
  for (const kv of list ?? []) {
    if (holdsInt(kv.value)) keys.add(kv.key ?? '')
    else keys.delete(kv.key ?? '')
  }
  return keys
}

function scope(s: Decoded): OtelScope {
  return {
    name: s?.name ?? '',
    version: s?.version ?? '',
    attributes: keyValues(s?.attributes),
    droppedAttributesCount: s?.droppedAttributesCount ?? 0,
  }
}

function span(s: Decoded): OtelSpan {
  return {
    traceId: hex(s.traceId),
    spanId: hex(s.spanId),
    parentSpanId: hex(s.parentSpanId),
    traceState: s.traceState ?? '',
    flags: s.flags ?? 0,
    name: s.name ?? '',
    kind: s.kind ?? 0,
    startNanos: nanos(s.startTimeUnixNano),
    endNanos: nanos(s.endTimeUnixNano),
    attributes: keyValues(s.attributes),
    intKeys: intKeys(s.attributes),
    droppedAttributesCount: s.droppedAttributesCount ?? 0,
    events: (s.events ?? []).map((e: Decoded) => ({
      timeNanos: nanos(e.timeUnixNano),
      name: e.name ?? '',
      attributes: keyValues(e.attributes),
      droppedAttributesCount: e.droppedAttributesCount ?? 0,
    })),
    droppedEventsCount: s.droppedEventsCount ?? 0,
    links: (s.links ?? []).map((l: Decoded) => ({
      traceId: hex(l.traceId),
      spanId: hex(l.spanId),
      traceState: l.traceState ?? '',
      attributes: keyValues(l.attributes),
      droppedAttributesCount: l.droppedAttributesCount ?? 0,
      flags: l.flags ?? 0,
    })),
    droppedLinksCount: s.droppedLinksCount ?? 0,
    status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
  }
}

/** Decodes a protobuf `ExportTraceServiceRequest`; a 400 when the bytes are not one (truncated, wrong wire types). */
export function decodeProtobufRequest(body: Uint8Array): OtelResourceSpans[] {
  let message: Decoded
  try {
    message = EXPORT_REQUEST.decode(body)
  } catch (error) {
    throw new BadRequestError(`Invalid OTLP protobuf body: ${(error as Error).message}`, { cause: error })
  }
  try {
    return (message.resourceSpans ?? []).map(
      (rs: Decoded): OtelResourceSpans => ({
        resource: {
          attributes: keyValues(rs.resource?.attributes),
          droppedAttributesCount: rs.resource?.droppedAttributesCount ?? 0,
        },
        schemaUrl: rs.schemaUrl ?? '',
        scopeSpans: (rs.scopeSpans ?? []).map((ss: Decoded) => ({
          scope: scope(ss.scope),
          schemaUrl: ss.schemaUrl ?? '',
          spans: (ss.spans ?? []).map(span),
        })),
      }),
    )
  } catch (error) {
    if (error instanceof BadRequestError) throw error
    // A stack overflow on a pathologically nested message, or a field of the wrong shape.
    throw new BadRequestError('Invalid OTLP protobuf body', { cause: error })
  }
}

/** Encodes an `ExportTraceServiceResponse` (`partial_success` only when some spans were rejected). */
export function encodeProtobufResponse(rejected: number, message: string): Uint8Array<ArrayBuffer> {
  const body = rejected > 0 ? { partialSuccess: { rejectedSpans: rejected, errorMessage: message } } : {}
  // A copy on its own `ArrayBuffer` (the writer's may be a pooled slice), as a response body needs.
  return new Uint8Array(EXPORT_RESPONSE.encode(EXPORT_RESPONSE.fromObject(body)).finish())
}
