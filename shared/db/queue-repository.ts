import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { ifConditionHolds, putIfAbsent, putIfAbsentOrRead } from '#shared/db/conditional-write'
import { queryIndexAll } from '#shared/db/index-query'
import { assertItemFits } from '#shared/db/item-size'
import { keyPart } from '#shared/db/key-part'
import { queryAll } from '#shared/db/query'
import { assertUpdateFits } from '#shared/db/update-fits'
import {
  type AnnotationQueue,
  AnnotationQueueSchema,
  type AnnotationState,
  type ProgressRow,
  ProgressRowSchema,
  type QueueItem,
  QueueItemSchema,
} from '#shared/schemas/annotation-queue'

// Annotation queues (docs/data-model.md). One partition per queue: PK=AQ#<project>#<queue_id>
//   SK=QUEUE                         the queue (GSI1 AQS#<project> / <created_at>#<id> while live)
//   SK=ITEM#<item_id>                an item (UUIDv7 ids: SK order is insertion order)
//   SK=CALL#<call_id>                claims a call for the queue (conditional put: one item per call)
//   SK=PROG#<item_id>#<annotator>    one annotator's progress on an item (conditional updates)

const queuePk = (project: string, queueId: string) => `AQ#${keyPart(project)}#${keyPart(queueId)}`

/**
 * Stores a new queue unless one with its id already stands; returns the stored queue (this one, or the one found: a
 * retried put whose first answer was lost, or an earlier attempt of the same request, meets its own queue).
 */
export async function putQueue(q: AnnotationQueue): Promise<AnnotationQueue> {
  const item = {
    PK: queuePk(q.project_id, q.id),
    SK: 'QUEUE',
    GSI1PK: `AQS#${keyPart(q.project_id)}`,
    GSI1SK: `${q.created_at}#${q.id}`,
    ...q,
  }
  const put = await putIfAbsentOrRead(item, () => getQueue(q.project_id, q.id))
  return put.written ? q : put.existing
}

/** Reads a queue (deleted ones included). */
export async function getQueue(project: string, queueId: string): Promise<AnnotationQueue | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: table(), Key: { PK: queuePk(project, queueId), SK: 'QUEUE' }, ConsistentRead: true }),
  )
  return Item === undefined ? undefined : AnnotationQueueSchema.parse(Item)
}

/** Live queues of a project (the sparse GSI1 listing drops deleted ones). */
export async function listLiveQueues(project: string): Promise<AnnotationQueue[]> {
  const items = await queryIndexAll({
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    ExpressionAttributeValues: { ':pk': `AQS#${keyPart(project)}` },
  })
  return items.map((i) => AnnotationQueueSchema.parse(i))
}

/** Updates fields of a live queue; undefined when it is missing or deleted. */
export async function updateQueue(
  project: string,
  queueId: string,
  fields: Partial<Pick<AnnotationQueue, 'name' | 'description' | 'scorer_refs' | 'updated_at' | 'deleted_at'>>,
): Promise<AnnotationQueue | undefined> {
  const names = Object.keys(fields)
  const deleting = fields.deleted_at != null
  if (!deleting) await assertUpdateFits({ PK: queuePk(project, queueId), SK: 'QUEUE' }, fields)
  const out = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: queuePk(project, queueId), SK: 'QUEUE' },
        UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}${deleting ? ' REMOVE GSI1PK, GSI1SK' : ''}`,
        ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(deleted_at) OR deleted_at = :null)',
        ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(names.map((n) => [`:${n}`, fields[n as keyof typeof fields]])),
          ':null': null,
        },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  )
  return out === undefined ? undefined : AnnotationQueueSchema.parse(out.Attributes)
}

/** Claims a call for a queue with a new item id; returns the item id that stands and whether it is new. */
export async function claimQueueCall(
  project: string,
  queueId: string,
  callId: string,
  itemId: string,
): Promise<{ itemId: string; created: boolean }> {
  const key = { PK: queuePk(project, queueId), SK: `CALL#${keyPart(callId)}` }
  if ((await putIfAbsent({ ...key, call_id: callId, item_id: itemId })) === 'written') return { itemId, created: true }
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))
  return { itemId: String(Item?.item_id), created: false }
}

const queueItem = (item: QueueItem) => ({
  PK: queuePk(item.project_id, item.queue_id),
  SK: `ITEM#${keyPart(item.id)}`,
  ...item,
})

/** Throws the 4xx (413) for a queue item DynamoDB could not store; checked before an add writes anything. */
export function assertQueueItemFits(item: QueueItem): void {
  assertItemFits(queueItem(item), 'queue item')
}

/**
 * Writes an item unless its id's item exists: two adds completing the same call's claim write it once, and only the one
 * whose write created it says `'written'` (an add counts only that). A put the SDK retried after a lost answer reads
 * `'exists'` too, so that rare add counts 0 for the item it wrote: the item is right, the count is informational.
 */
export function putQueueItem(item: QueueItem): Promise<'written' | 'exists'> {
  return putIfAbsent(queueItem(item))
}

/** Reads one item of a queue. */
export async function getQueueItem(project: string, queueId: string, itemId: string): Promise<QueueItem | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: table(),
      Key: { PK: queuePk(project, queueId), SK: `ITEM#${keyPart(itemId)}` },
      ConsistentRead: true,
    }),
  )
  return Item === undefined ? undefined : QueueItemSchema.parse(Item)
}

/**
 * Which call ids already have a live item in the queue. Read from the items, not the `CALL#` claims: a claim whose
 * item write failed must not count, or the retry that completes it would be answered as a duplicate.
 */
export async function listQueueCallIds(project: string, queueId: string): Promise<Set<string>> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
    ExpressionAttributeValues: { ':pk': queuePk(project, queueId), ':sk': 'ITEM#' },
    ProjectionExpression: 'call_id, deleted_at',
    ConsistentRead: true,
  })
  return new Set(items.filter((i) => i.deleted_at == null).map((i) => String(i.call_id)))
}

/** Items of a queue (insertion order). */
export async function listQueueItems(project: string, queueId: string): Promise<QueueItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
    ExpressionAttributeValues: { ':pk': queuePk(project, queueId), ':sk': 'ITEM#' },
    ConsistentRead: true,
  })
  return items.map((i) => QueueItemSchema.parse(i))
}

/** Progress rows of a queue, or of one item. */
export async function listProgress(project: string, queueId: string, itemId?: string): Promise<ProgressRow[]> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
    ExpressionAttributeValues: {
      ':pk': queuePk(project, queueId),
      ':sk': itemId === undefined ? 'PROG#' : `PROG#${keyPart(itemId)}#`,
    },
    ConsistentRead: true,
  })
  return items.map((i) => ProgressRowSchema.parse(i))
}

/** One annotator's progress row on an item. */
export async function getProgress(
  project: string,
  queueId: string,
  itemId: string,
  annotator: string,
): Promise<ProgressRow | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: table(),
      Key: { PK: queuePk(project, queueId), SK: `PROG#${keyPart(itemId)}#${keyPart(annotator)}` },
      ConsistentRead: true,
    }),
  )
  return Item === undefined ? undefined : ProgressRowSchema.parse(Item)
}

/**
 * Writes an annotator's state only if the row is still as read (`from` undefined = no row yet). Returns false when
 * another request changed it first; the caller re-reads and re-checks the transition.
 */
export async function writeProgress(
  project: string,
  queueId: string,
  itemId: string,
  annotator: string,
  from: AnnotationState | undefined,
  to: AnnotationState,
  now: string,
): Promise<boolean> {
  const key = { PK: queuePk(project, queueId), SK: `PROG#${keyPart(itemId)}#${keyPart(annotator)}` }
  if (from === undefined) {
    const row: ProgressRow = {
      item_id: itemId,
      annotator_user_id: annotator,
      annotation_state: to,
      created_at: now,
      updated_at: now,
    }
    return (await putIfAbsent({ ...key, ...row })) === 'written'
  }
  const updated = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: key,
        UpdateExpression: 'SET annotation_state = :to, updated_at = :now',
        ConditionExpression: 'annotation_state = :from',
        ExpressionAttributeValues: { ':to': to, ':from': from, ':now': now },
      }),
    ),
  )
  return updated !== undefined
}
