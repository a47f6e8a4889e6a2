import { assertCallEndFits, assertCallStartFits } from '#shared/db/call-records'
import { storeCallJson } from '#shared/db/call-repository'
import { CHUNK_BYTES, INLINE_LIMIT_BYTES, type StoredJson } from '#shared/db/large-value'
import { BadRequestError } from '#shared/errors/http-error'
import type { EndedCall, StartedCall } from '#shared/schemas/call'
import type { CallEndItem, CallStartItem } from '#shared/schemas/call-item'
import { pythonDumpsInOrder } from '#shared/tracing/digest'
import { redactingReplacer, shouldRedact } from '#shared/tracing/redact'
import { toStoredDatetime } from '#shared/tracing/time'

/**
 * Builds the stored items of call parts: the JSON columns are serialised once (`startJson`/`endJson`), checked
 * against DynamoDB's limits before anything is written (`assertStartFits`/`assertEndFits`), then stored (large ones as
 * chunks, see large-value.ts) by `buildStart`/`buildEnd`.
 */

const REF_PREFIX = 'weave:///'

/**
 * Collects every `weave:///` ref string inside a JSON value (recorded for `input_refs` / `output_refs` filters),
 * except under redacted keys, whose values are not stored.
 */
export function collectRefs(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    if (value.startsWith(REF_PREFIX)) into.add(value)
  } else if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, into)
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) if (!shouldRedact(k)) collectRefs(v, into)
  }
  return into
}

const bytes = (json: string) => Buffer.byteLength(json, 'utf8')
const opt = (v: string | null | undefined) => (v === null || v === undefined ? undefined : v)

/** A request datetime as stored; a 400 when it cannot be stored. */
export function storedTime(value: unknown, field: string): string {
  const stored = toStoredDatetime(value)
  if (stored === undefined) throw new BadRequestError(`Invalid datetime in ${field}`)
  return stored
}

/** A start's JSON columns as text, the refs among its inputs, and its storage size (see `dumpSize`). */
export type StartJson = { attributes: string; inputs: string; otel: string | undefined; refs: string[]; size: number }
/** An end's JSON columns as text, the refs in its output, and its storage size (see `dumpSize`). */
export type EndJson = { output: string; summary: string; refs: string[]; size: number }

/**
 * A JSON column's storage size as Weave measures it (docs/tracing.md §7.6): ClickHouse's `length(inputs_dump)` of
 * Python's `json.dumps(value)` (`", "`/`": "` separators, non-ASCII as `\uXXXX`, so characters are bytes), of the value
 * as stored (redacted).
 */
const dumpSize = (value: unknown, redact: boolean) =>
  pythonDumpsInOrder(value, redact ? redactingReplacer : undefined).length

/**
 * Serialises a start's JSON columns (once per request). Every ingest path (call/start, call/upsert_batch, OTel, calls
 * Loom records itself) comes through here and `endJson`, so values under credential-shaped keys are replaced by
 * `REDACTED` before anything is stored or indexed (shared/tracing/redact.ts; docs/security.md).
 */
export function startJson(s: StartedCall): StartJson {
  return {
    attributes: JSON.stringify(s.attributes, redactingReplacer),
    inputs: JSON.stringify(s.inputs, redactingReplacer),
    otel:
      s.otel_dump === null || s.otel_dump === undefined ? undefined : JSON.stringify(s.otel_dump, redactingReplacer),
    refs: [...collectRefs(s.inputs)],
    size: dumpSize(s.attributes, true) + dumpSize(s.inputs, true),
  }
}

/** Serialises an end's JSON columns (once per request), redacting the output as `startJson` does the inputs. */
export function endJson(e: EndedCall): EndJson {
  const output = e.output === undefined ? null : e.output
  return {
    output: JSON.stringify(output, redactingReplacer),
    summary: JSON.stringify(e.summary),
    refs: [...collectRefs(e.output)],
    size: dumpSize(output, true) + dumpSize(e.summary, false),
  }
}

type Columns<K extends string> = Record<K, StoredJson>

function startItem(
  s: StartedCall & { id: string; trace_id: string },
  json: StartJson,
  columns: Columns<'attributes' | 'inputs'> & { otel: StoredJson | undefined },
  userId: string,
): CallStartItem {
  return {
    project_id: s.project_id,
    id: s.id,
    op_name: s.op_name,
    display_name: opt(s.display_name) || undefined,
    trace_id: s.trace_id,
    parent_id: opt(s.parent_id),
    thread_id: opt(s.thread_id),
    turn_id: opt(s.turn_id),
    started_at: storedTime(s.started_at, 'started_at'),
    attributes: columns.attributes,
    inputs: columns.inputs,
    otel_dump: columns.otel,
    // The caller's identity, never a body value (docs/tracing.md §2).
    wb_user_id: userId,
    wb_run_id: opt(s.wb_run_id),
    wb_run_step: s.wb_run_step ?? undefined,
    input_refs: json.refs.length > 0 ? json.refs : undefined,
    size: json.size,
  }
}

type EndColumns = Columns<'output' | 'summary'> & { exception: string | StoredJson | undefined }

function endItem(e: EndedCall, json: EndJson, columns: EndColumns, traceId: string | undefined) {
  return {
    project_id: e.project_id,
    id: e.id,
    ended_at: storedTime(e.ended_at, 'ended_at'),
    exception: columns.exception,
    output: columns.output,
    summary: columns.summary,
    trace_id: traceId,
    wb_run_step_end: e.wb_run_step_end ?? undefined,
    output_refs: json.refs.length > 0 ? json.refs : undefined,
    size: json.size,
  } satisfies CallEndItem
}

/** Stores a start's large JSON columns as chunks and returns its item (the part itself is not written). */
export async function buildStart(
  s: StartedCall & { id: string; trace_id: string },
  json: StartJson,
  userId: string,
): Promise<CallStartItem> {
  const store = (column: 'attributes' | 'inputs' | 'otel_dump', text: string) =>
    storeCallJson(s.project_id, s.id, column, text)
  const columns = {
    attributes: await store('attributes', json.attributes),
    inputs: await store('inputs', json.inputs),
    otel: json.otel === undefined ? undefined : await store('otel_dump', json.otel),
  }
  return startItem(s, json, columns, userId)
}

// An exception is text: kept inline as the string when short; a long one (a whole prompt or stack dump in the message:
// Weave stores any length) is stored in chunks as its JSON text, like the JSON columns, so it never makes its end part
// too large for an item.
const longException = (e: EndedCall): string | undefined => {
  const exception = opt(e.exception)
  return exception !== undefined && bytes(exception) > INLINE_LIMIT_BYTES ? JSON.stringify(exception) : undefined
}

/** Stores an end's large JSON columns as chunks and returns its item (the part itself is not written). */
export async function buildEnd(e: EndedCall, json: EndJson, traceId: string | undefined): Promise<CallEndItem> {
  const long = longException(e)
  const columns = {
    output: await storeCallJson(e.project_id, e.id, 'output', json.output),
    summary: await storeCallJson(e.project_id, e.id, 'summary', json.summary),
    exception: long === undefined ? opt(e.exception) : await storeCallJson(e.project_id, e.id, 'exception', long),
  }
  return endItem(e, json, columns, traceId)
}

// What `storeJson` will keep in the item, without writing: the text, or a ref of the same shape.
function planned(json: string): StoredJson {
  const n = bytes(json)
  if (n <= INLINE_LIMIT_BYTES) return { json }
  return { ref: { hash: '0'.repeat(32), chunks: Math.ceil(n / CHUNK_BYTES), bytes: n } }
}

/** Throws the 4xx a start answers when its item would break a DynamoDB limit (413 for size, 400 for a key). */
export function assertStartFits(
  s: StartedCall & { id: string; trace_id: string },
  json: StartJson,
  userId: string,
): void {
  const columns = {
    attributes: planned(json.attributes),
    inputs: planned(json.inputs),
    otel: json.otel === undefined ? undefined : planned(json.otel),
  }
  assertCallStartFits(startItem(s, json, columns, userId))
}

/** Throws the 4xx an end answers when its item would break a DynamoDB limit (413 for size, 400 for a key). */
export function assertEndFits(e: EndedCall, json: EndJson): void {
  const long = longException(e)
  const columns = {
    output: planned(json.output),
    summary: planned(json.summary),
    exception: long === undefined ? opt(e.exception) : planned(long),
  }
  assertCallEndFits(endItem(e, json, columns, opt(e.trace_id)))
}
