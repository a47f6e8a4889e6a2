import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb'
import { getAll } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { type FeedbackSource, indexFor, payloadText, triggerBase } from '#shared/db/feedback-keys'
import { keyPart } from '#shared/db/key-part'
import type { StoredJson } from '#shared/db/large-value'

// Feedback read in pages for aggregates and call queries (stats, payload schemas, calls filtered or sorted by
// feedback): time and payload only, or the join columns call queries need. Row writes and whole-row reads are in
// shared/db/feedback-repository.ts; the key layout in shared/db/feedback-keys.ts.

/** The stats-relevant part of a row: its time and payload text. */
export type FeedbackSample = { created_at: string; payload: string }

/** Options of a window read. */
export type WindowOptions = {
  project: string
  startIso: string
  endIso: string
  feedbackType?: string | null | undefined
  triggerRef?: string | null | undefined
  newestFirst?: boolean
  limit?: number
}

/**
 * Streams the rows of `[start, end)` page by page, reading only time and payload. An exact `trigger_ref` reads its
 * monitor's index; a `trigger_ref` ending in `:*` matches every trigger ref that starts with it minus `:*` (ClickHouse
 * `startsWith`, so `mon:*` also matches `monitor2:…`), which no single monitor key holds, so it filters the
 * `feedback_type` index or the project's. The other conditions are filters on that range.
 */
export async function* readFeedbackWindow(o: WindowOptions): AsyncGenerator<FeedbackSample[]> {
  const trigger = o.triggerRef
  const prefix = trigger?.endsWith(':*') === true
  const source: FeedbackSource =
    trigger != null && !prefix
      ? { kind: 'trigger', base: triggerBase(trigger) }
      : o.feedbackType != null
        ? { kind: 'type', feedbackType: o.feedbackType }
        : { kind: 'project' }
  const ix = indexFor(o.project, source)
  const values: Record<string, unknown> = { ':pk': ix.pk, ':a': o.startIso, ':b': o.endIso }
  const filters: string[] = []
  if (trigger === ':*') {
    // Every ref starts with the empty prefix; no empty string goes to DynamoDB as an expression value.
    filters.push('attribute_exists(trigger_ref)')
  } else if (trigger != null) {
    values[':t'] = prefix ? trigger.slice(0, -2) : trigger
    filters.push(prefix ? 'begins_with(trigger_ref, :t)' : 'trigger_ref = :t')
  }
  if (source.kind === 'trigger' && o.feedbackType != null) {
    values[':ft'] = o.feedbackType
    filters.push('feedback_type = :ft')
  }
  const filter = filters.length === 0 ? undefined : filters.join(' AND ')
  let startKey: Record<string, unknown> | undefined
  let seen = 0
  do {
    const page: QueryCommandOutput = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: ix.IndexName,
        // Sort keys are `<created_at>#<id>`: every key of an instant < end sorts below the bare end instant.
        KeyConditionExpression: `${ix.pkName} = :pk AND ${ix.skName} BETWEEN :a AND :b`,
        ExpressionAttributeValues: values,
        ProjectionExpression: 'PK, created_at, payload',
        ScanIndexForward: !o.newestFirst,
        ExclusiveStartKey: startKey,
        ...(filter === undefined ? {} : { FilterExpression: filter }),
        ...(o.limit === undefined ? {} : { Limit: o.limit }),
      }),
    )
    const items = page.Items ?? []
    const out: FeedbackSample[] = []
    for (const item of items) {
      const stored = item.payload as StoredJson
      const payload = 'json' in stored ? stored.json : await payloadText(item)
      out.push({ created_at: String(item.created_at), payload })
    }
    seen += out.length
    yield out
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined && (o.limit === undefined || seen < o.limit))
}

/** A feedback row as call queries read it: the reference's join columns, the payload as JSON text. */
export type CallFeedbackRow = {
  id: string
  weave_ref: string
  feedback_type: string
  created_at: string
  payload: string
  runnable_ref: string | null
  trigger_ref: string | null
  /** The row was written while its call was started and not deleted (a call that is live or was deleted since). */
  call_live: boolean
}

// A FilterExpression `IN` list takes at most 100 values; longer type lists are filtered in code.
const MAX_IN_VALUES = 100

/**
 * Streams a project's feedback rows page by page (oldest first), only those of `feedbackTypes` when given (all when
 * undefined), for call queries that filter or sort by feedback. Reads the project listing (GSI1, which holds whole
 * rows) with the types as a filter: the type listing (GSI2) does not project `weave_ref`, and a deployed index's
 * projection cannot change in place (docs/data-model.md, Known limits). `weave_ref` and the id are read from the
 * row's keys; the row's other columns (`row_dump`) only with `runnableRefs` or when a key holds a digest.
 */
export async function* readProjectFeedback(
  project: string,
  feedbackTypes?: readonly string[],
  options: { runnableRefs?: boolean } = {},
): AsyncGenerator<CallFeedbackRow[]> {
  const types = feedbackTypes === undefined ? undefined : [...new Set(feedbackTypes)]
  if (types !== undefined && types.length === 0) return
  const values: Record<string, unknown> = { ':pk': `FBT#${keyPart(project)}` }
  let filter: string | undefined
  if (types !== undefined && types.length <= MAX_IN_VALUES) {
    types.forEach((t, i) => {
      values[`:t${i}`] = t
    })
    filter = `feedback_type IN (${types.map((_, i) => `:t${i}`).join(', ')})`
  }
  const wanted = types === undefined ? undefined : new Set(types)
  const dump = options.runnableRefs === true
  const refPrefix = `FBREF#${keyPart(project)}#`
  const idPrefix = `FB#${keyPart(project)}#`
  // A key part that is a digest (`~…`, values over 200 bytes) does not give the value back.
  const fromKey = (key: unknown, prefix: string) => {
    const k = String(key)
    return k.startsWith(prefix) && !k.startsWith('~', prefix.length) ? k.slice(prefix.length) : undefined
  }
  let startKey: Record<string, unknown> | undefined
  do {
    const page: QueryCommandOutput = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: values,
        ProjectionExpression: `PK, SK, GSI3PK, created_at, feedback_type, payload, trigger_ref, call_live${dump ? ', row_dump' : ''}`,
        ExclusiveStartKey: startKey,
        ...(filter === undefined ? {} : { FilterExpression: filter }),
      }),
    )
    const items = (page.Items ?? []).filter((i) => wanted === undefined || wanted.has(String(i.feedback_type)))
    const digested = items.filter((i) => !dump && fromKey(i.GSI3PK, refPrefix) === undefined)
    const dumps = new Map<string, unknown>()
    if (digested.length > 0) {
      const got = await getAll(digested.map((i) => ({ PK: i.PK, SK: i.SK })))
      for (const g of got) dumps.set(String(g.PK), g.row_dump)
    }
    const out: CallFeedbackRow[] = []
    for (const item of items) {
      const rowDump = dump ? item.row_dump : dumps.get(String(item.PK))
      const columns = rowDump === undefined ? {} : (JSON.parse(String(rowDump)) as Record<string, unknown>)
      const stored = item.payload as StoredJson
      out.push({
        // A digested id still orders ties between rows of the same instant.
        id: String(columns.id ?? String(item.PK).slice(idPrefix.length)),
        weave_ref: String(columns.weave_ref ?? fromKey(item.GSI3PK, refPrefix)),
        feedback_type: String(item.feedback_type),
        created_at: String(item.created_at),
        payload: 'json' in stored ? stored.json : await payloadText(item),
        runnable_ref: typeof columns.runnable_ref === 'string' ? columns.runnable_ref : null,
        trigger_ref: typeof item.trigger_ref === 'string' ? item.trigger_ref : null,
        call_live: item.call_live === true,
      })
    }
    yield out
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
}
