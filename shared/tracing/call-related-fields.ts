import { InvalidFieldError } from '#shared/errors/tracing-errors'
import { chString, type Val, walkJson } from '#shared/tracing/query-values'

/**
 * Query and sort paths on calls that read another entity (docs/tracing.md §6.2): a call's feedback
 * (`feedback.[<feedback_type>].payload.<path>`, `feedback.[<type>].runnable_ref`, `feedback.[<type>].trigger_ref`,
 * `*` for any type) and its membership of an annotation queue (`annotation_queue_items.queue_id`). Parsed and
 * rejected as the reference's `get_field_by_name` does; resolved per call from rows read once per request
 * (`shared/tracing/call-relations.ts`).
 */

/** A parsed related path. */
export type RelatedField =
  | { kind: 'feedback'; feedbackType: string; column: 'payload'; path: string[] }
  | { kind: 'feedback'; feedbackType: string; column: 'runnable_ref' | 'trigger_ref' }
  | { kind: 'queue' }

/** One feedback row of a call, as the related fields read it. */
export type CallFeedback = {
  id: string
  feedback_type: string
  created_at: string
  payload: Record<string, unknown>
  runnable_ref: string | null
  trigger_ref: string | null
  /** The row was written while its call was started and not deleted (read by counts, never by the query). */
  call_live: boolean
}

/** What a request read about its calls' feedback and queue membership. */
export type CallRelations = {
  /** Feedback of the referenced types per call id, newest first. */
  feedback: ReadonlyMap<string, readonly CallFeedback[]>
  /** The queue the query restricts to (`null`: it names the field but no queue id); undefined: no queue field. */
  queueId: string | null | undefined
  /** The calls with a live item in that queue. */
  members: ReadonlySet<string>
}

const FEEDBACK_PREFIX = 'feedback.'
const QUEUE_PREFIX = 'annotation_queue_items.'
// `[<type>].<rest>`, the type greedy up to the last `].` as in the reference.
const FEEDBACK_PATH = /^(\[.+\])\.(.+)$/

/**
 * The related field a path names, undefined for any other path; throws `InvalidFieldError` (422) for a malformed
 * feedback path (`Invalid feedback path: …`) or an annotation queue item column other than `queue_id`.
 */
export function parseRelatedField(path: string): RelatedField | undefined {
  if (path.startsWith(FEEDBACK_PREFIX)) {
    const rest = path.slice(FEEDBACK_PREFIX.length)
    const match = FEEDBACK_PATH.exec(rest)
    if (match === null) throw new InvalidFieldError(`Invalid feedback path: ${rest}`)
    const [, bracketed = '', tail = ''] = match
    const feedbackType = bracketed.slice(1, -1)
    const [column, ...sub] = tail.split('.')
    if (column === 'payload') return { kind: 'feedback', feedbackType, column, path: sub }
    // The reference ignores anything after these two columns.
    if (column === 'runnable_ref' || column === 'trigger_ref') return { kind: 'feedback', feedbackType, column }
    throw new InvalidFieldError(`Invalid feedback path: ${tail}`)
  }
  if (path.startsWith(QUEUE_PREFIX)) {
    const column = path.slice(QUEUE_PREFIX.length)
    if (column !== 'queue_id') throw new InvalidFieldError(`Invalid annotation_queue_items field: ${column}`)
    return { kind: 'queue' }
  }
  return undefined
}

const ofType = (rows: readonly CallFeedback[], type: string) =>
  type === '*' ? rows : rows.filter((r) => r.feedback_type === type)

/**
 * A related field's value for one call. ClickHouse joins the call's feedback and takes one row per call (`anyIf`);
 * Loom takes the newest: for `[<type>].payload.<path>` the newest row of that type (a call without one reads as a
 * missing JSON value, `''`); for `[*].payload.<path>` the newest row whose value there is not empty; for the ref
 * columns the newest row that has one (null otherwise). A bare `payload` is the payload's JSON text. The queue field
 * is the queue's id for its members (others never reach the query: see `passesRelations`).
 */
export function relatedField(callId: string, field: RelatedField, rel: CallRelations | undefined): Val {
  if (field.kind === 'queue') {
    const id = rel?.queueId
    return { t: 'plain', v: typeof id === 'string' && rel?.members.has(callId) ? id : null }
  }
  const rows = ofType(rel?.feedback.get(callId) ?? [], field.feedbackType)
  if (field.column !== 'payload') {
    const column = field.column
    return { t: 'plain', v: rows.find((r) => r[column] !== null)?.[column] ?? null }
  }
  if (field.path.length === 0) {
    const row = rows[0]
    return { t: 'plain', v: row === undefined ? '' : JSON.stringify(row.payload) }
  }
  if (field.feedbackType !== '*') {
    const row = rows[0]
    return row === undefined
      ? { t: 'json', raw: undefined, present: false }
      : { t: 'json', ...walkJson(row.payload, field.path) }
  }
  for (const row of rows) {
    const found = walkJson(row.payload, field.path)
    if (found.present && chString(found.raw) !== '') return { t: 'json', ...found }
  }
  return { t: 'json', raw: undefined, present: false }
}

/** False for a call outside the queue the query names (the reference inner-joins the queue's items). */
export function passesRelations(callId: string, rel: CallRelations | undefined): boolean {
  if (rel === undefined || rel.queueId === undefined) return true
  return rel.members.has(callId)
}
