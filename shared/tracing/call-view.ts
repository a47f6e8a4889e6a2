import { type CallJsonColumn, loadCallJson } from '#shared/db/call-repository'
import type { StoredJson } from '#shared/db/large-value'
import type { CallParts } from '#shared/schemas/call-item'
import { renderDatetime, storedToMicros } from '#shared/tracing/time'

/** A call merged from its stored parts, JSON columns parsed; datetimes in storage form. */
export type LoadedCall = {
  id: string
  project_id: string
  op_name: string
  display_name: string | null
  trace_id: string
  parent_id: string | null
  thread_id: string | null
  turn_id: string | null
  started_at: string
  ended_at: string | null
  exception: string | null
  attributes: Record<string, unknown>
  inputs: Record<string, unknown>
  output: unknown
  /** The summary as inserted (no derived `weave` keys). */
  summary: Record<string, unknown>
  wb_user_id: string | null
  wb_run_id: string | null
  wb_run_step: number | null
  wb_run_step_end: number | null
  deleted_at: string | null
  input_refs: string[]
  output_refs: string[]
  /** Byte length of the four JSON columns (docs/tracing.md §7.6). */
  size: number
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

// Inline values (the common case) parse synchronously; only chunked values need a read.
function json(
  call: { project_id: string; id: string },
  column: CallJsonColumn,
  stored: StoredJson | undefined,
): unknown {
  if (stored === undefined) return undefined
  if ('json' in stored) return JSON.parse(stored.json)
  return loadCallJson(call.project_id, call.id, column, stored).then((text) => JSON.parse(text))
}

function maybeAll(values: unknown[]): unknown[] | Promise<unknown[]> {
  return values.some((v) => v instanceof Promise) ? Promise.all(values) : values
}

/** Merges a call's parts; undefined when the start part is missing (a call is listed only once it started). */
export async function loadCall(parts: CallParts): Promise<LoadedCall | undefined> {
  const s = parts.start
  if (s === undefined) return undefined
  const e = parts.end
  const stored = e?.exception
  const [attributes, inputs, otel, output, summary, exception] = await maybeAll([
    json(s, 'attributes', s.attributes),
    json(s, 'inputs', s.inputs),
    json(s, 'otel_dump', s.otel_dump),
    json(s, 'output', e?.output),
    json(s, 'summary', e?.summary),
    typeof stored === 'object' ? json(s, 'exception', stored) : stored,
  ])
  const attrs = isObj(attributes) ? attributes : {}
  return {
    id: s.id,
    project_id: s.project_id,
    op_name: s.op_name,
    display_name: s.display_name ?? null,
    trace_id: s.trace_id,
    parent_id: s.parent_id ?? null,
    thread_id: s.thread_id ?? null,
    turn_id: s.turn_id ?? null,
    started_at: s.started_at,
    ended_at: e?.ended_at ?? null,
    exception: typeof exception === 'string' ? exception : null,
    attributes: otel === undefined ? attrs : { ...attrs, otel_span: otel },
    inputs: isObj(inputs) ? inputs : {},
    output: output === undefined ? null : output,
    summary: isObj(summary) ? summary : {},
    wb_user_id: s.wb_user_id ?? null,
    wb_run_id: s.wb_run_id ?? null,
    wb_run_step: s.wb_run_step ?? null,
    wb_run_step_end: e?.wb_run_step_end ?? null,
    deleted_at: s.deleted_at ?? null,
    input_refs: s.input_refs ?? [],
    output_refs: e?.output_refs ?? [],
    size: s.size + (e?.size ?? 0),
  }
}

/** The derived `summary.weave` status (docs/tracing.md §7.2). */
export function callStatus(call: LoadedCall): 'success' | 'error' | 'running' | 'descendant_error' {
  if (call.exception !== null) return 'error'
  if (call.ended_at === null) return 'running'
  const counts = call.summary.status_counts
  if (isObj(counts) && Number(counts.error) > 0) return 'descendant_error'
  return 'success'
}

/** The derived latency in whole milliseconds, or null while running. */
export function callLatencyMs(call: LoadedCall): number | null {
  if (call.ended_at === null) return null
  return Math.floor(storedToMicros(call.ended_at) / 1000) - Math.floor(storedToMicros(call.started_at) / 1000)
}

const REF_NAME_RE = /^weave:\/\/\/[^/]+\/[^/]+\/op\/([^:/]+)(?::[^/]*)?$/

/** The derived trace name: the op ref's name, else the op name. */
export function callTraceName(call: LoadedCall): string {
  return REF_NAME_RE.exec(call.op_name)?.[1] ?? call.op_name
}

/** The summary as returned: the stored map plus the derived `weave` keys (stored derived keys are discarded). */
export function derivedSummary(
  call: LoadedCall,
  costs?: Record<string, unknown>,
  feedback?: Record<string, unknown>[],
): Record<string, unknown> {
  const stored = isObj(call.summary.weave) ? call.summary.weave : {}
  const { status: _s, trace_name: _t, latency_ms: _l, display_name: _d, ...rest } = stored
  const weave: Record<string, unknown> = { ...rest, status: callStatus(call) }
  if (call.display_name !== null) weave.display_name = call.display_name
  else weave.trace_name = callTraceName(call)
  const latency = callLatencyMs(call)
  if (latency !== null) weave.latency_ms = latency
  if (costs !== undefined) weave.costs = costs
  if (feedback !== undefined) weave.feedback = feedback
  return { ...call.summary, weave }
}

/** Options of `renderCall`. */
export type RenderOptions = {
  costs?: Record<string, unknown>
  /** `summary.weave.feedback` rows (with `include_feedback`). */
  feedback?: Record<string, unknown>[]
  storageSize?: boolean
  /** Whole-trace size for a root call when requested; null on other calls. */
  totalStorageSize?: number | null
  columns?: ReadonlySet<string>
}

/** A call as `CallSchema` JSON (pydantic field order, tz-aware UTC datetimes). */
export function renderCall(call: LoadedCall, options: RenderOptions = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: call.id,
    project_id: call.project_id,
    op_name: call.op_name,
    display_name: call.display_name,
    trace_id: call.trace_id,
    parent_id: call.parent_id,
    thread_id: call.thread_id,
    turn_id: call.turn_id,
    started_at: renderDatetime(call.started_at),
    attributes: call.attributes,
    inputs: call.inputs,
    ended_at: call.ended_at === null ? null : renderDatetime(call.ended_at),
    exception: call.exception,
    output: call.output,
    summary: derivedSummary(call, options.costs, options.feedback),
    wb_user_id: call.wb_user_id,
    wb_run_id: call.wb_run_id,
    wb_run_step: call.wb_run_step,
    wb_run_step_end: call.wb_run_step_end,
    deleted_at: call.deleted_at === null ? null : renderDatetime(call.deleted_at),
    storage_size_bytes: options.storageSize ? call.size : null,
    total_storage_size_bytes: options.totalStorageSize ?? null,
    expire_at: null,
  }
  if (options.columns === undefined) return out
  // Every key stays, as the reference's `_ch_call_dict_to_call_schema_dict` builds each line whatever the columns:
  // one not selected is null, `attributes` and `inputs` `{}` (the Python client validates each line as a
  // `CallSchema`, which requires both).
  const keep = options.columns
  for (const key of Object.keys(out))
    if (!keep.has(key)) out[key] = key === 'attributes' || key === 'inputs' ? {} : null
  return out
}
