import { readProjectFeedback } from '#shared/db/feedback-reads'
import { listQueueCallIds } from '#shared/db/queue-repository'
import type { SortBy } from '#shared/schemas/call'
import type { Operand, Operation, Query } from '#shared/schemas/query'
import { callIdOfRef } from '#shared/tracing/call-ref'
import {
  type CallFeedback,
  type CallRelations,
  parseRelatedField,
  type RelatedField,
  relatedField,
} from '#shared/tracing/call-related-fields'
import { evaluate, queryFields } from '#shared/tracing/query-eval'

/**
 * Reads what a call query's feedback and queue fields need, before any call is read (docs/data-model.md,
 * "Tracing: calls", access patterns): the project's feedback of the referenced types, grouped by call, and the
 * live items of the queue the query names. From them it derives the only calls that can match, when the query
 * requires feedback or queue membership, so the calls are then fetched by id instead of walking the project.
 */

/** The relations of a request and, when the query can only match some calls, those calls' ids. */
export type RelationPlan = {
  relations: CallRelations | undefined
  /** Ascending; undefined when every call may match. */
  callIds: string[] | undefined
}

// A conjunct as an operation (a bare field or literal is read for its truth, as inside `$and`).
const wrap = (node: Operand): Operation => ({ k: 'and', ops: [node] })

const conjuncts = (node: Operand): Operand[] => (node.k === 'and' ? node.ops.flatMap(conjuncts) : [node])

// The reference reads the queue id from an `$eq` of the field and a string literal among the top-level conjuncts
// (`_extract_queue_id_from_operand`); Loom takes either operand order. None: no call matches.
function queueIdOf(query: Query): string | null {
  for (const c of conjuncts(query.expr)) {
    if (c.k !== 'cmp' || c.op !== 'eq') continue
    const [field, lit] = c.a.k === 'get' ? [c.a, c.b] : [c.b, c.a]
    if (field.k === 'get' && field.path === 'annotation_queue_items.queue_id' && lit.k === 'lit') {
      if (typeof lit.v === 'string') return lit.v
    }
  }
  return null
}

async function readCallFeedback(
  project: string,
  types: string[] | undefined,
  runnableRefs: boolean,
): Promise<Map<string, CallFeedback[]>> {
  const byCall = new Map<string, CallFeedback[]>()
  for await (const page of readProjectFeedback(project, types, { runnableRefs })) {
    for (const row of page) {
      const id = callIdOfRef(project, row.weave_ref)
      if (id === undefined) continue
      const payload = JSON.parse(row.payload) as Record<string, unknown>
      const list = byCall.get(id)
      const entry: CallFeedback = { ...row, payload }
      if (list === undefined) byCall.set(id, [entry])
      else list.push(entry)
    }
  }
  // Newest first: a call's field reads its newest matching row.
  for (const list of byCall.values()) {
    list.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
  }
  return byCall
}

type Parsed = { path: string; field: RelatedField }

function relatedIn(node: Operand): Parsed[] {
  return queryFields(node).flatMap((path) => {
    const field = parseRelatedField(path)
    return field === undefined ? [] : [{ path, field }]
  })
}

const resolverFor = (callId: string, rel: CallRelations | undefined, fields: Map<string, RelatedField>) => {
  return (path: string) => relatedField(callId, fields.get(path) as RelatedField, rel)
}

// The fields of a conjunct that reads only feedback fields and is not true for a call without that feedback, so only
// calls whose feedback makes it true can match; undefined for any other conjunct (e.g. a `$not`, true without it).
function narrowingFields(c: Operand): Map<string, RelatedField> | undefined {
  const fields = relatedIn(c)
  if (fields.length === 0 || fields.length !== queryFields(c).length) return undefined
  if (fields.some((f) => f.field.kind !== 'feedback')) return undefined
  const byPath = new Map(fields.map((f) => [f.path, f.field]))
  return evaluate(wrap(c), resolverFor('', undefined, byPath)) === true ? undefined : byPath
}

/**
 * Whether every top-level conjunct of the query narrows by feedback as `planCallRelations` does: then the query is
 * true for exactly the calls of its `callIds` (the query reads nothing of the call itself), so a count of the started,
 * undeleted calls among them is the query's count. Throws for a malformed feedback path, as the plan does.
 */
export function selectsByFeedbackOnly(query: Query): boolean {
  const all = conjuncts(query.expr)
  return all.length > 0 && all.every((c) => narrowingFields(c) !== undefined)
}

/**
 * Reads the relations a selection's query and sort name (none: `relations` undefined) and the calls the query can
 * match at all: members of the named queue, intersected, for each top-level conjunct that reads only feedback fields
 * and is not true for a call without that feedback, with the calls whose feedback makes it true.
 */
export async function planCallRelations(
  project: string,
  query: Query | null | undefined,
  sortBy: readonly SortBy[] | null | undefined,
): Promise<RelationPlan> {
  const inQuery = query ? relatedIn(query.expr) : []
  const inSort = (sortBy ?? []).flatMap((s) => {
    const field = parseRelatedField(s.field)
    return field === undefined ? [] : [{ path: s.field, field }]
  })
  const all = [...inQuery, ...inSort]
  if (all.length === 0) return { relations: undefined, callIds: undefined }
  const feedbackTypes = new Set<string>()
  for (const { field } of all) if (field.kind === 'feedback') feedbackTypes.add(field.feedbackType)
  const queueNamed = query !== null && query !== undefined && inQuery.some((p) => p.field.kind === 'queue')
  const queueId = queueNamed ? queueIdOf(query) : undefined
  const [feedback, members] = await Promise.all([
    feedbackTypes.size === 0
      ? new Map<string, CallFeedback[]>()
      : readCallFeedback(
          project,
          feedbackTypes.has('*') ? undefined : [...feedbackTypes],
          all.some(({ field }) => field.kind === 'feedback' && field.column === 'runnable_ref'),
        ),
    typeof queueId === 'string' ? listQueueCallIds(project, queueId) : new Set<string>(),
  ])
  const relations: CallRelations = { feedback, queueId, members }

  let ids: Set<string> | undefined = queueNamed ? new Set(members) : undefined
  for (const c of query ? conjuncts(query.expr) : []) {
    const byPath = narrowingFields(c)
    if (byPath === undefined) continue
    const scope: Iterable<string> = ids ?? feedback.keys()
    const kept = new Set<string>()
    for (const id of scope) {
      if (evaluate(wrap(c), resolverFor(id, relations, byPath)) === true) kept.add(id)
    }
    ids = kept
  }
  return { relations, callIds: ids === undefined ? undefined : [...ids].sort() }
}
