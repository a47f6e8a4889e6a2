import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { putIfAbsent, putIfAbsentOrRead } from '#shared/db/conditional-write'
import {
  type FeedbackSource,
  feedbackKey,
  indexFor,
  payloadOwner,
  payloadText,
  triggerBase,
} from '#shared/db/feedback-keys'
import { queryIndexAll } from '#shared/db/index-query'
import { assertItemFits } from '#shared/db/item-size'
import { keyPart } from '#shared/db/key-part'
import { deleteLargeValue, plannedJson, type StoredJson, storeJson } from '#shared/db/large-value'
import { type FeedbackRow, FeedbackRowSchema } from '#shared/schemas/feedback'

// Feedback rows: writes (idempotent by id, retried creates by retry key), whole-row reads and listings; the key layout
// is in shared/db/feedback-keys.ts, the paged reads for stats and call queries in shared/db/feedback-reads.ts.

// Payloads above INLINE_BYTES live in chunk items beside the row (large-value).
const INLINE_BYTES = 300_000

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
  const key = feedbackKey(row.project_id, row.id)
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
  const key = feedbackKey(row.project_id, row.id)
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
    new GetCommand({ TableName: table(), Key: feedbackKey(project, id), ConsistentRead: true }),
  )
  return Item === undefined ? undefined : toRow(Item)
}

/** Permanently deletes a feedback row (and its split payload); absent rows are a no-op. */
export async function deleteFeedback(project: string, id: string): Promise<void> {
  const key = feedbackKey(project, id)
  const { Attributes } = await db().send(new DeleteCommand({ TableName: table(), Key: key, ReturnValues: 'ALL_OLD' }))
  const stored = Attributes?.payload as StoredJson | undefined
  if (stored !== undefined && 'ref' in stored) await deleteLargeValue(payloadOwner(key.PK), stored.ref)
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
