import { DeleteCommand, GetCommand, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb'
import { getAll } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { putIfAbsent, putIfAbsentOrRead } from '#shared/db/conditional-write'
import { queryIndexAll } from '#shared/db/index-query'
import { assertItemFits } from '#shared/db/item-size'
import { keyPart } from '#shared/db/key-part'
import { deleteLargeValue, loadJson, plannedJson, type StoredJson, storeJson } from '#shared/db/large-value'
import { type FeedbackRow, FeedbackRowSchema } from '#shared/schemas/feedback'

// Feedback (docs/data-model.md): PK=FB#<project>#<id> SK=FB; the row's columns in `row_dump`, its payload in
// `payload_dump` (kept whole, split when large). Indexes, all with sort key <created_at>#<id>:
//   GSI1 FBT#<project>                   time window (stats, payload_schema, unfiltered query)
//   GSI2 FBTY#<project>#<feedback_type>  one feedback type (stats with feedback_type, query by type)
//   GSI3 FBREF#<project>#<weave_ref>     feedback of one call or object (query by weave_ref)
//   GSI4 FBTRIG#<project>#<trigger ref without its version>   feedback of one monitor (stats by exact trigger_ref)
// Retried creates without a client id: PK=FBRETRY#<project>#<retry key> SK=FBRETRY holds the id first chosen.
// `call_live: true` (never in `row_dump`, so never in an answer): when the row was written, the call its weave_ref
// names in the same project had a start part without `deleted_at`. Read only by call counts (`readProjectFeedback`,
// through GSI1, which projects ALL).

const keyOf = (project: string, id: string) => ({ PK: `FB#${keyPart(project)}#${keyPart(id)}`, SK: 'FB' })
// Payloads above INLINE_BYTES live in chunk items beside the row (large-value).
const INLINE_BYTES = 300_000
const payloadOwner = (pk: string) => ({ pk, skPrefix: 'PAYLOAD' })

const payloadText = (item: Record<string, unknown>) =>
  loadJson(payloadOwner(String(item.PK)), item.payload as StoredJson)

async function toRow(item: Record<string, unknown>): Promise<FeedbackRow> {
  const payload = JSON.parse(await payloadText(item))
  return FeedbackRowSchema.parse({ ...JSON.parse(String(item.row_dump)), payload })
}

/** What a row's item records beside its columns: `callLive`, its call was live when the row was written. */
export type FeedbackItemOptions = { callLive?: boolean }

/** The DynamoDB item of a feedback row whose payload is already stored (inline or as a large-value ref). */
export function feedbackItem(
  row: FeedbackRow,
  payload: StoredJson,
  options: FeedbackItemOptions = {},
): Record<string, unknown> {
  const key = keyOf(row.project_id, row.id)
  // A long id enters the index sort keys as its digest too: DynamoDB caps a sort key at 1,024 bytes.
  const sort = `${row.created_at}#${keyPart(row.id)}`
  const { payload: _payload, ...columns } = row
  return {
    ...key,
    payload,
    row_dump: JSON.stringify(columns),
    created_at: row.created_at,
    feedback_type: row.feedback_type,
    ...(options.callLive === true ? { call_live: true } : {}),
    ...(row.trigger_ref === null
      ? {}
      : {
          trigger_ref: row.trigger_ref,
          GSI4PK: `FBTRIG#${keyPart(row.project_id)}#${keyPart(triggerBase(row.trigger_ref))}`,
          GSI4SK: sort,
        }),
    GSI1PK: `FBT#${keyPart(row.project_id)}`,
    GSI1SK: sort,
    GSI2PK: `FBTY#${keyPart(row.project_id)}#${keyPart(row.feedback_type)}`,
    GSI2SK: sort,
    GSI3PK: `FBREF#${keyPart(row.project_id)}#${keyPart(row.weave_ref)}`,
    GSI3SK: sort,
  }
}

/**
 * Throws the 4xx (400 for a value too long for a key, 413 for a row over 400 KB) for a row DynamoDB could not store;
 * called for every row of a request before its first write, so a refused request writes nothing.
 */
export function assertFeedbackFits(row: FeedbackRow): void {
  const planned = plannedJson(JSON.stringify(row.payload), INLINE_BYTES)
  assertItemFits(feedbackItem(row, planned, { callLive: true }), 'feedback row')
}

/**
 * Stores a feedback row unless its id exists; returns the stored row either way (idempotent by id). A row that exists
 * keeps what it recorded (`callLive` included).
 */
export async function putFeedback(
  row: FeedbackRow,
  options: FeedbackItemOptions = {},
): Promise<{ row: FeedbackRow; created: boolean }> {
  const key = keyOf(row.project_id, row.id)
  const stored = await storeJson(payloadOwner(key.PK), JSON.stringify(row.payload), INLINE_BYTES)
  const put = await putIfAbsentOrRead(feedbackItem(row, stored, options), () => getFeedback(row.project_id, row.id))
  return put.written ? { row, created: true } : { row: put.existing, created: false }
}

/** Records which id a retried create (same retry key) uses; returns the id chosen by the first attempt. */
export async function claimRetryKey(project: string, retryKey: string, id: string): Promise<string> {
  const key = { PK: `FBRETRY#${keyPart(project)}#${keyPart(retryKey)}`, SK: 'FBRETRY' }
  if ((await putIfAbsent({ ...key, feedback_id: id })) === 'written') return id
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))
  return String(Item?.feedback_id ?? id)
}

/** Reads one feedback row. */
export async function getFeedback(project: string, id: string): Promise<FeedbackRow | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: table(), Key: keyOf(project, id), ConsistentRead: true }),
  )
  return Item === undefined ? undefined : toRow(Item)
}

/** Permanently deletes a feedback row (and its split payload); absent rows are a no-op. */
export async function deleteFeedback(project: string, id: string): Promise<void> {
  const key = keyOf(project, id)
  const { Attributes } = await db().send(new DeleteCommand({ TableName: table(), Key: key, ReturnValues: 'ALL_OLD' }))
  const stored = Attributes?.payload as StoredJson | undefined
  if (stored !== undefined && 'ref' in stored) await deleteLargeValue(payloadOwner(key.PK), stored.ref)
}

/** A trigger ref without its `:<version>` (`weave:///e/p/object/mon:abc` → `weave:///e/p/object/mon`). */
export function triggerBase(ref: string): string {
  const colon = ref.lastIndexOf(':')
  return colon > ref.lastIndexOf('/') && colon > 'weave:'.length ? ref.slice(0, colon) : ref
}

/** Which stored listing a read uses. */
export type FeedbackSource =
  | { kind: 'project' }
  | { kind: 'type'; feedbackType: string }
  | { kind: 'ref'; weaveRef: string }
  | { kind: 'trigger'; base: string }

function indexFor(
  project: string,
  source: FeedbackSource,
): { IndexName: string; pk: string; pkName: string; skName: string } {
  if (source.kind === 'type')
    return {
      IndexName: 'GSI2',
      pk: `FBTY#${keyPart(project)}#${keyPart(source.feedbackType)}`,
      pkName: 'GSI2PK',
      skName: 'GSI2SK',
    }
  if (source.kind === 'ref')
    return {
      IndexName: 'GSI3',
      pk: `FBREF#${keyPart(project)}#${keyPart(source.weaveRef)}`,
      pkName: 'GSI3PK',
      skName: 'GSI3SK',
    }
  if (source.kind === 'trigger')
    return {
      IndexName: 'GSI4',
      pk: `FBTRIG#${keyPart(project)}#${keyPart(source.base)}`,
      pkName: 'GSI4PK',
      skName: 'GSI4SK',
    }
  return { IndexName: 'GSI1', pk: `FBT#${keyPart(project)}`, pkName: 'GSI1PK', skName: 'GSI1SK' }
}

/** Feedback rows of a listing, oldest first. */
export async function listFeedback(project: string, source: FeedbackSource): Promise<FeedbackRow[]> {
  const ix = indexFor(project, source)
  const items = await queryIndexAll({
    IndexName: ix.IndexName,
    KeyConditionExpression: `${ix.pkName} = :pk`,
    ExpressionAttributeValues: { ':pk': ix.pk },
  })
  return Promise.all(items.map(toRow))
}

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
