import { entityOf } from '#shared/auth/authenticate'
import type { Principal } from '#shared/schemas/api-key'
import { type IngestItem, ingestCalls } from '#shared/tracing/call-ingest'

/** Token usage of one model, in Weave's `LLMUsageSchema` shape (extra keys are kept). */
export type RecordedUsage = {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
  requests?: number
  input_tokens?: number
  output_tokens?: number
  cache_read_input_tokens?: number
  cache_creation_input_tokens?: number
  [key: string]: unknown
}

/** One finished call to record, as the inference gateway or the training log describe it. */
export type RecordCallInput = {
  /** Caller-supplied call id (a UUIDv7 is best); recording the same id again changes nothing. */
  id: string
  /** `"<entity>/<project>"`; the user must belong to the entity. */
  projectId: string
  opName: string
  inputs: Record<string, unknown>
  output: unknown
  /** `usage` is keyed by model id; other summary keys are kept as given. */
  summary?: { usage?: Record<string, RecordedUsage>; [key: string]: unknown }
  startedAt: Date | string
  endedAt: Date | string
  /** The authenticated user the call is attributed to (`wb_user_id`). */
  userId: string
  /** Entities the user belongs to; defaults to the project's entity (the caller has already authorised the user). */
  entities?: string[]
  /** Defaults to the call id (the call is a trace root). */
  traceId?: string
  parentId?: string
  displayName?: string
  /** Error message when the call failed. */
  exception?: string
  attributes?: Record<string, unknown>
}

const iso = (t: Date | string) => (t instanceof Date ? t.toISOString() : t)

/** The two parts (start, end) of a finished call, as the call ingest takes them. */
function partsOf(input: RecordCallInput): IngestItem[] {
  const traceId = input.traceId ?? input.id
  return [
    {
      mode: 'start',
      start: {
        project_id: input.projectId,
        id: input.id,
        op_name: input.opName,
        display_name: input.displayName ?? null,
        trace_id: traceId,
        parent_id: input.parentId ?? null,
        started_at: iso(input.startedAt),
        attributes: input.attributes ?? {},
        inputs: input.inputs,
      },
    },
    {
      mode: 'end',
      end: {
        project_id: input.projectId,
        id: input.id,
        trace_id: traceId,
        ended_at: iso(input.endedAt),
        exception: input.exception ?? null,
        output: input.output,
        summary: input.summary ?? {},
      },
    },
  ]
}

/** Who a call is recorded as: its user, authorised for the input's entities (by default its project's own). */
function principalOf(input: RecordCallInput): Principal {
  const entity = entityOf(input.projectId)
  return { userId: input.userId, keyId: 'internal', entity, entities: input.entities ?? [entity] }
}

/**
 * Records finished calls (start and end parts) in their projects' traces, idempotently on each `input.id`: a retry
 * with the same id neither duplicates the call nor counts it twice. The calls of one user, entities and project go
 * through the call ingest together, a handful of DynamoDB requests for all of them rather than for each. Returns each
 * call's `{id, trace_id}`, in order. Every part is checked against DynamoDB's limits before anything is written: a
 * call too large fails its group with nothing of the group written. On a failure it throws only once every group has
 * settled, so a retry never runs beside a write of the same calls still in flight (which could count them twice).
 */
export async function recordCalls(inputs: readonly RecordCallInput[]): Promise<{ id: string; trace_id: string }[]> {
  const groups = new Map<string, { principal: Principal; at: number[] }>()
  inputs.forEach((input, i) => {
    const principal = principalOf(input)
    const key = JSON.stringify([principal.userId, input.projectId, principal.entities])
    const group = groups.get(key) ?? { principal, at: [] }
    group.at.push(i)
    groups.set(key, group)
  })
  const traceIds = inputs.map((input) => input.traceId ?? input.id)
  const settled = await Promise.allSettled(
    [...groups.values()].map(async ({ principal, at }) => {
      const results = await ingestCalls(
        principal,
        at.flatMap((i) => partsOf(inputs[i] as RecordCallInput)),
      )
      at.forEach((i, k) => {
        const started = results[2 * k] as { trace_id?: string } | undefined
        if (started?.trace_id !== undefined) traceIds[i] = started.trace_id
      })
    }),
  )
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed !== undefined) throw failed.reason
  return inputs.map((input, i) => ({ id: input.id, trace_id: traceIds[i] as string }))
}

/**
 * Records one finished call (start and end parts) in the project's traces, idempotently on `input.id`: a retry with
 * the same id neither duplicates the call nor counts it twice. Returns the call and trace ids.
 *
 * @example await recordCall({ id: uuidv7(), projectId: 'acme/inference', opName: 'chat.completions', inputs, output,
 *   summary: { usage: { 'llama-3': { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, requests: 1 } } },
 *   startedAt, endedAt: new Date(), userId: principal.userId })
 */
export async function recordCall(input: RecordCallInput): Promise<{ id: string; trace_id: string }> {
  const [recorded] = await recordCalls([input])
  return recorded as { id: string; trace_id: string }
}
