import { BadRequestError } from '#shared/errors/http-error'
import { integerOfText, quoteInt64Numbers } from '#shared/otel/otlp-json-int64'
import {
  type AttrValue,
  doubleValue,
  type KeyValues,
  MAX_VALUE_DEPTH,
  type OtelResourceSpans,
  type OtelScope,
  type OtelSpan,
  SPAN_KINDS,
  STATUS_CODES,
} from '#shared/otel/otlp-model'

/**
 * OTLP/JSON (the protobuf JSON mapping with OTLP's exceptions): field names in lowerCamelCase (the proto names are
 * accepted too, as protobuf JSON parsers do), trace and span ids as hex strings, enums as integers (names accepted),
 * 64-bit integers as decimal strings or numbers, bytes as base64. Unknown fields are ignored, and `null` stands for an
 * unset field, as the mapping says: an `AnyValue` whose members are all `null` has no value (stored as `null`).
 * 64-bit integers keep every digit either way (`otlp-json-int64.ts`); written with a fraction of zeros or an exponent
 * (`1.7e18`) they are read exactly as the integer they denote, while a fraction (`1.5`), a negative time or a value
 * outside the field's 64-bit range fails the export.
 */

type Json = Record<string, unknown>

const fail = (what: string): never => {
  throw new BadRequestError(`Invalid OTLP JSON body: ${what}`)
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

function field(o: Json, camel: string, snake: string): unknown {
  return o[camel] !== undefined ? o[camel] : o[snake]
}

function obj(o: Json, camel: string, snake: string, what: string): Json | undefined {
  const v = field(o, camel, snake)
  if (v === undefined || v === null) return undefined
  return isObject(v) ? v : fail(`${what} must be an object`)
}

function list(o: Json | undefined, camel: string, snake: string, what: string): Json[] {
  const v = o === undefined ? undefined : field(o, camel, snake)
  if (v === undefined || v === null) return []
  if (!Array.isArray(v) || !v.every(isObject)) return fail(`${what} must be an array of objects`)
  return v
}

function str(o: Json, camel: string, snake: string, what: string): string {
  const v = field(o, camel, snake)
  if (v === undefined || v === null) return ''
  return typeof v === 'string' ? v : fail(`${what} must be a string`)
}

function uint(o: Json, camel: string, snake: string, what: string): number {
  const v = field(o, camel, snake)
  if (v === undefined || v === null) return 0
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : fail(`${what} must be a non-negative integer`)
}

function enumValue(o: Json, camel: string, snake: string, names: readonly string[], prefix: string): number {
  const v = field(o, camel, snake)
  if (v === undefined || v === null) return 0
  if (typeof v === 'number' && Number.isInteger(v)) return v
  const i = typeof v === 'string' ? names.indexOf(v.replace(prefix, '')) : -1
  return i >= 0 ? i : fail(`${camel} must be an enum number`)
}

const UINT64_MAX = 2n ** 64n - 1n
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

// A 64-bit field's value as a bigint: text exactly, a number only while exact (a number literal is text by now,
// `quoteInt64Numbers`, unless its key was written with escapes), so a value is never silently rounded.
function integer(v: unknown): bigint | undefined {
  if (typeof v === 'string') return integerOfText(v)
  return typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : undefined
}

function nanos(o: Json, camel: string, snake: string): bigint {
  const v = field(o, camel, snake)
  if (v === undefined || v === null) return 0n
  const n = integer(v)
  return n !== undefined && n >= 0n && n <= UINT64_MAX ? n : fail(`${camel} must be an unsigned 64-bit integer`)
}

// A signed 64-bit attribute value: a number when exact, else its decimal text (JSON numbers are doubles), as from
// protobuf.
function int64(v: unknown): number | string {
  const n = integer(v)
  if (n === undefined || n < INT64_MIN || n > INT64_MAX) return fail('intValue must be a 64-bit integer')
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : String(n)
}

function double(v: unknown): number | string {
  // A literal past the double range (`1e400`) reads as an infinity, as it would from protobuf.
  if (typeof v === 'number') return doubleValue(v)
  // The protobuf JSON mapping spells the special doubles as strings; stored as a protobuf NaN is.
  if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return doubleValue(Number(v))
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v)
  return fail('doubleValue must be a number')
}

// A oneof member given as `null` is not set (protobuf's own JSON parsers clear the field), so the next one is read.
function member(o: Json, camel: string, snake: string): unknown {
  const v = o[camel] ?? o[snake]
  return v === null ? undefined : v
}

function anyValue(v: unknown, depth: number): AttrValue {
  if (v === undefined || v === null) return null
  if (!isObject(v)) return fail('an attribute value must be an AnyValue object')
  if (depth > MAX_VALUE_DEPTH) fail(`attribute values nest deeper than ${MAX_VALUE_DEPTH} levels`)
  const s = member(v, 'stringValue', 'string_value')
  if (s !== undefined) return typeof s === 'string' ? s : fail('stringValue must be a string')
  const b = member(v, 'boolValue', 'bool_value')
  if (b !== undefined) return typeof b === 'boolean' ? b : fail('boolValue must be a boolean')
  const i = member(v, 'intValue', 'int_value')
  if (i !== undefined) return int64(i)
  const d = member(v, 'doubleValue', 'double_value')
  if (d !== undefined) return double(d)
  const a = obj(v, 'arrayValue', 'array_value', 'arrayValue')
  if (a !== undefined) {
    const values = field(a, 'values', 'values') ?? []
    if (!Array.isArray(values)) return fail('arrayValue.values must be an array')
    return values.map((x) => anyValue(x, depth + 1))
  }
  const kv = obj(v, 'kvlistValue', 'kvlist_value', 'kvlistValue')
  if (kv !== undefined)
    return Object.fromEntries(keyValues(list(kv, 'values', 'values', 'kvlistValue.values'), depth + 1))
  const bytes = member(v, 'bytesValue', 'bytes_value')
  if (bytes !== undefined) return typeof bytes === 'string' ? bytes : fail('bytesValue must be a base64 string')
  return null
}

function keyValues(items: Json[], depth = 0): KeyValues {
  return items.map((kv): [string, AttrValue] => [str(kv, 'key', 'key', 'key'), anyValue(kv.value, depth)])
}

const attrs = (o: Json | undefined) => keyValues(list(o, 'attributes', 'attributes', 'attributes'))

// Whether an AnyValue holds an integer: its `intValue` is the member anyValue reads (no string or bool member set).
const holdsInt = (v: unknown): boolean =>
  isObject(v) &&
  member(v, 'stringValue', 'string_value') === undefined &&
  member(v, 'boolValue', 'bool_value') === undefined &&
  member(v, 'intValue', 'int_value') !== undefined

function intKeys(o: Json): Set<string> {
  const keys = new Set<string>()
  for (const kv of list(o, 'attributes', 'attributes', 'attributes')) {
    const key = str(kv, 'key', 'key', 'key')
    if (holdsInt(kv.value)) keys.add(key)
    else keys.delete(key)
  }
  return keys
}

const dropped = (o: Json | undefined) =>
  o === undefined ? 0 : uint(o, 'droppedAttributesCount', 'dropped_attributes_count', 'droppedAttributesCount')
const id = (o: Json, camel: string, snake: string) => str(o, camel, snake, camel).toLowerCase()

function scope(s: Json | undefined): OtelScope {
  return {
    name: s === undefined ? '' : str(s, 'name', 'name', 'scope.name'),
    version: s === undefined ? '' : str(s, 'version', 'version', 'scope.version'),
    attributes: attrs(s),
    droppedAttributesCount: dropped(s),
  }
}

function span(s: Json): OtelSpan {
  const status = obj(s, 'status', 'status', 'status')
  return {
    traceId: id(s, 'traceId', 'trace_id'),
    spanId: id(s, 'spanId', 'span_id'),
    parentSpanId: id(s, 'parentSpanId', 'parent_span_id'),
    traceState: str(s, 'traceState', 'trace_state', 'traceState'),
    flags: uint(s, 'flags', 'flags', 'flags'),
    name: str(s, 'name', 'name', 'name'),
    kind: enumValue(s, 'kind', 'kind', SPAN_KINDS, 'SPAN_KIND_'),
    startNanos: nanos(s, 'startTimeUnixNano', 'start_time_unix_nano'),
    endNanos: nanos(s, 'endTimeUnixNano', 'end_time_unix_nano'),
    attributes: attrs(s),
    intKeys: intKeys(s),
    droppedAttributesCount: dropped(s),
    events: list(s, 'events', 'events', 'events').map((e) => ({
      timeNanos: nanos(e, 'timeUnixNano', 'time_unix_nano'),
      name: str(e, 'name', 'name', 'event name'),
      attributes: attrs(e),
      droppedAttributesCount: dropped(e),
    })),
    droppedEventsCount: uint(s, 'droppedEventsCount', 'dropped_events_count', 'droppedEventsCount'),
    links: list(s, 'links', 'links', 'links').map((l) => ({
      traceId: id(l, 'traceId', 'trace_id'),
      spanId: id(l, 'spanId', 'span_id'),
      traceState: str(l, 'traceState', 'trace_state', 'traceState'),
      attributes: attrs(l),
      droppedAttributesCount: dropped(l),
      flags: uint(l, 'flags', 'flags', 'flags'),
    })),
    droppedLinksCount: uint(s, 'droppedLinksCount', 'dropped_links_count', 'droppedLinksCount'),
    status: {
      code: status === undefined ? 0 : enumValue(status, 'code', 'code', STATUS_CODES, 'STATUS_CODE_'),
      message: status === undefined ? '' : str(status, 'message', 'message', 'status.message'),
    },
  }
}

/** Decodes an OTLP/JSON `ExportTraceServiceRequest`; a 400 when the text is not one. */
export function decodeJsonRequest(text: string): OtelResourceSpans[] {
  let body: unknown
  try {
    body = JSON.parse(quoteInt64Numbers(text))
  } catch {
    return fail('not JSON')
  }
  if (!isObject(body)) return fail('the body must be an ExportTraceServiceRequest object')
  try {
    return list(body, 'resourceSpans', 'resource_spans', 'resourceSpans').map((rs) => {
      const resource = obj(rs, 'resource', 'resource', 'resource')
      return {
        resource: { attributes: attrs(resource), droppedAttributesCount: dropped(resource) },
        schemaUrl: str(rs, 'schemaUrl', 'schema_url', 'schemaUrl'),
        scopeSpans: list(rs, 'scopeSpans', 'scope_spans', 'scopeSpans').map((ss) => ({
          scope: scope(obj(ss, 'scope', 'scope', 'scope')),
          schemaUrl: str(ss, 'schemaUrl', 'schema_url', 'schemaUrl'),
          spans: list(ss, 'spans', 'spans', 'spans').map(span),
        })),
      }
    })
  } catch (error) {
    if (error instanceof BadRequestError) throw error
    throw new BadRequestError('Invalid OTLP JSON body', { cause: error })
  }
}

/** The JSON `ExportTraceServiceResponse` (`partialSuccess` only when some spans were rejected). */
export function jsonResponse(rejected: number, message: string): Record<string, unknown> {
  // int64 fields are strings in the protobuf JSON mapping.
  return rejected > 0 ? { partialSuccess: { rejectedSpans: String(rejected), errorMessage: message } } : {}
}
