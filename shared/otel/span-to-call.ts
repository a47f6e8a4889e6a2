import { createHash } from 'node:crypto'
import { AttributeConflictError, type AttrTree, attributeAt, attributeTree } from '#shared/otel/attribute-tree'
import {
  firstOf,
  INPUT_KEYS,
  jsonValue,
  OUTPUT_KEYS,
  TIME_OVERRIDE_KEYS,
  usageOf,
  WANDB_KEYS,
  weaveAttributesOf,
} from '#shared/otel/conventions'
import { messagesFromEvents } from '#shared/otel/message-events'
import { type AttrValue, type OtelSpan, STATUS_ERROR } from '#shared/otel/otlp-model'
import { shortenName } from '#shared/otel/shorten-name'
import { nanosToIso, type SpanOrigin, spanDump } from '#shared/otel/span-dump'
import type { EndedCall, StartedCall } from '#shared/schemas/call'
import { toStoredDatetime } from '#shared/tracing/time'

/** A span that cannot become a call; its message goes into the response's `partial_success`. */
export class SpanRejectedError extends Error {}

/** The call parts of one span: ids are the span's own, so a re-sent span writes the same call. */
export type SpanCall = { start: StartedCall & { id: string; trace_id: string }; end: EndedCall }

// Weave's limits (weave/trace_server/constants.py): longer names are shortened, never rejected.
const MAX_OP_NAME_LENGTH = 128
const MAX_DISPLAY_NAME_LENGTH = 1024

// Overrides are read as OTLP times are: nanoseconds that fit in 64 bits.
const MAX_OVERRIDE_NANOS = 2n ** 64n

// ISO text starts with its date; `fromisoformat` refuses the numeric text pydantic would read as a timestamp.
const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}/
const INTEGER_TEXT_RE = /^-?\d+$/

const TRACE_ID_RE = /^[0-9a-f]{32}$/
const SPAN_ID_RE = /^[0-9a-f]{16}$/
const ZERO_RE = /^0*$/

/**
 * The op name of a span: its name; past 128 characters shortened as Weave does (at a delimiter where it can be, then
 * `:` and 4 hex digits of the name's SHA-256, so long names stay apart).
 */
export function opNameOf(name: string): string {
  if (name === '') return 'unnamed_span'
  if (name.length <= MAX_OP_NAME_LENGTH) return name
  const suffix = `:${createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 4)}`
  return shortenName(name, MAX_OP_NAME_LENGTH, suffix, false)
}

function validIds(span: OtelSpan): string | null {
  const reject = (msg: string): never => {
    throw new SpanRejectedError(`span '${span.name}': ${msg}`)
  }
  if (!TRACE_ID_RE.test(span.traceId) || ZERO_RE.test(span.traceId)) reject('trace id must be 16 non-zero bytes')
  if (!SPAN_ID_RE.test(span.spanId) || ZERO_RE.test(span.spanId)) reject('span id must be 8 non-zero bytes')
  // An empty or all-zero parent is OTLP's "no parent".
  if (ZERO_RE.test(span.parentSpanId)) return null
  if (!SPAN_ID_RE.test(span.parentSpanId)) reject('parent span id must be 8 bytes')
  return span.parentSpanId
}

function checkTimes(span: OtelSpan): void {
  const reject = (msg: string): never => {
    throw new SpanRejectedError(`span ${span.spanId}: ${msg}`)
  }
  if (span.startNanos === 0n) reject('start_time_unix_nano is not set')
  if (span.endNanos === 0n) reject('end_time_unix_nano is not set')
  if (span.endNanos < span.startNanos) reject('end_time_unix_nano is before start_time_unix_nano')
}

// A Langfuse time as Weave's `try_parse_timestamp` reads it: ISO text (`datetime.fromisoformat`, so not numeric text),
// an integer as epoch nanoseconds, a double as epoch seconds; ignored when zero, negative or unreadable. Whether a sent
// attribute was an integer is known (`intKeys`); a number nested in a key/value list or JSON text counts as an integer
// when it has no fraction, as `json.loads` reads integer literals.
function overrideTime(span: OtelSpan, tree: AttrTree, keys: readonly string[]): string | undefined {
  const found = firstOf(tree, keys)
  if (found === undefined) return undefined
  const [key, v] = found
  const sent = span.attributes.some(([k]) => k === key)
  if (sent ? span.intKeys.has(key) : typeof v === 'number' && Number.isInteger(v)) {
    const nanos = integerOf(v)
    return nanos !== undefined && nanos > 0n && nanos < MAX_OVERRIDE_NANOS ? nanosToIso(nanos) : undefined
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v <= 0) return undefined
    const nanos = BigInt(Math.round(v * 1e6)) * 1000n
    return nanos < MAX_OVERRIDE_NANOS ? nanosToIso(nanos) : undefined
  }
  if (typeof v === 'string' && ISO_DATE_RE.test(v)) return toStoredDatetime(v) === undefined ? undefined : v
  return undefined
}

// An OTLP integer as decoded: a number, or decimal text past 2^53.
function integerOf(v: AttrValue): bigint | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : undefined
  return typeof v === 'string' && INTEGER_TEXT_RE.test(v) ? BigInt(v) : undefined
}

const isObject = (v: unknown): v is Record<string, AttrValue> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

function inputsOf(tree: AttrTree, events: ReturnType<typeof messagesFromEvents>): Record<string, AttrValue> {
  const found = firstOf(tree, INPUT_KEYS)
  if (found === undefined) return events.inputs ?? {}
  const [key, raw] = found
  const value = jsonValue(raw)
  // Generic `input`/`inputs` objects are the inputs themselves, as the reference de-nests them.
  if ((key === 'input' || key === 'inputs') && isObject(value)) return value
  return { [key]: value }
}

function outputOf(tree: AttrTree, events: ReturnType<typeof messagesFromEvents>): AttrValue {
  const found = firstOf(tree, OUTPUT_KEYS)
  if (found === undefined) return events.output ?? {}
  const [key, raw] = found
  const value = jsonValue(raw)
  return key === 'output' || key === 'outputs' ? value : { [key]: value }
}

// Weave stores an error span's status message as the exception, even when it is empty; the span's `exception` event
// stays in `otel_span.events`.
const exceptionOf = (span: OtelSpan): string | null => (span.status.code === STATUS_ERROR ? span.status.message : null)

function wandbOf(tree: AttrTree) {
  const text = (keys: readonly string[]) => {
    const found = firstOf(tree, keys)
    return found === undefined ? undefined : typeof found[1] === 'string' ? found[1] : JSON.stringify(found[1])
  }
  const display = text(WANDB_KEYS.display_name)
  const thread = firstOf(tree, WANDB_KEYS.thread_id)
  const custom = attributeAt(tree, WANDB_KEYS.attributes[0])
  return {
    displayName: display === undefined ? undefined : shortenName(display, MAX_DISPLAY_NAME_LENGTH),
    threadId: thread === undefined ? undefined : typeof thread[1] === 'string' ? thread[1] : JSON.stringify(thread[1]),
    // A GenAI conversation id makes every span of it a turn; `wandb.thread_id` only with `wandb.is_turn`.
    isTurn:
      (thread !== undefined && thread[0] !== 'wandb.thread_id') || firstOf(tree, WANDB_KEYS.is_turn) !== undefined,
    custom: isObject(custom) ? custom : undefined,
  }
}

/** Maps one span to its call's start and end parts (the reference's `Span.to_call`); `SpanRejectedError` if it can't. */
export function spanToCall(span: OtelSpan, project: string, origin: SpanOrigin): SpanCall {
  const parentId = validIds(span)
  checkTimes(span)
  let tree: AttrTree
  try {
    tree = attributeTree(span.attributes)
  } catch (error) {
    if (error instanceof AttributeConflictError) throw new SpanRejectedError(`span ${span.spanId}: ${error.message}`)
    throw error
  }
  const events = messagesFromEvents(span.events)
  const inputs = inputsOf(tree, events)
  const output = outputOf(tree, events)
  const usage = usageOf(tree)
  const weave = weaveAttributesOf(tree)
  const wandb = wandbOf(tree)
  const found = Object.keys(weave).length > 0 || Object.keys(inputs).length > 0 || Object.keys(usage).length > 0
  const hasOutput = isObject(output) ? Object.keys(output).length > 0 : output !== null
  // Nothing Weave understands: keep every attribute, as the reference does.
  const attributes: Record<string, AttrValue> = found || hasOutput ? { ...weave, ...wandb.custom } : { ...tree }
  const parameters = weave.model_parameters
  const model = weave.model ?? (isObject(parameters) ? parameters.model : undefined)
  const summary: Record<string, unknown> = {}
  if (Object.keys(usage).length > 0)
    summary.usage = { [typeof model === 'string' && model !== '' ? model : 'usage']: usage }
  return {
    start: {
      project_id: project,
      id: span.spanId,
      trace_id: span.traceId,
      parent_id: parentId,
      op_name: opNameOf(span.name),
      display_name: wandb.displayName ?? null,
      thread_id: wandb.threadId ?? null,
      turn_id: wandb.threadId !== undefined && wandb.isTurn ? span.spanId : null,
      started_at: overrideTime(span, tree, TIME_OVERRIDE_KEYS.start) ?? nanosToIso(span.startNanos),
      attributes,
      inputs,
      otel_dump: spanDump(span, tree, parentId, origin),
    },
    end: {
      project_id: project,
      id: span.spanId,
      trace_id: span.traceId,
      ended_at: overrideTime(span, tree, TIME_OVERRIDE_KEYS.end) ?? nanosToIso(span.endNanos),
      exception: exceptionOf(span),
      output,
      summary,
    },
  }
}
