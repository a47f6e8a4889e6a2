import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { getAll, putAll } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { putIfAbsentOrRead } from '#shared/db/conditional-write'
import { keyPart } from '#shared/db/key-part'
import { queryAll } from '#shared/db/query'
import {
  type IdempotencyRecord,
  IdempotencyRecordSchema,
  type LogRecord,
  LogRecordSchema,
  type LogResponse,
} from '#shared/schemas/training-log'

// Group chunks: PK=TGROUP#<logId>#<group> SK=C#<chunk>: one partition key per group spreads a 5 MB call's writes over
// many partitions (one partition takes at most 1,000 WCU/s).
// Log record (history row): PK=PMODEL#<modelId> SK=LOG#<split>#<step>#<recordedAt>#<logId>, written after the chunks,
// so a call is visible only once all of its groups are stored.
// Idempotency: PK=PMODEL#<modelId> SK=IDEM#<key>.
const STEP_DIGITS = 12

const chunkKey = (logId: string, group: number, chunk: number) => ({
  PK: `TGROUP#${logId}#${group}`,
  SK: `C#${String(chunk).padStart(5, '0')}`,
})
const idemKey = (modelId: string, key: string) => ({ PK: `PMODEL#${modelId}`, SK: `IDEM#${key}` })

// Splits are free strings: encoding keeps `#` out of the sort key, so one split's prefix never matches another's, and
// a long one enters as a digest (`keyPart`). Writes reject a split with a lone surrogate; a query naming one reads it as
// U+FFFD, which `encodeURIComponent` accepts.
const splitPart = (split: string) => keyPart(encodeURIComponent(split.replace(/\p{Cs}/gu, '\ufffd')))
const stepPart = (step: number) => String(step).padStart(STEP_DIGITS, '0')

// Metric values (a log record's, and those of the response an idempotency record keeps) are stored as JSON text, not
// as DynamoDB numbers: a double ranges wider (up to 1.8e308, down to 5e-324) than DynamoDB's numbers (1e-130 to
// 1e126), and JSON keeps every double exactly. Rows written as maps before read as they are.
function parseLogRecord(item: Record<string, unknown>): LogRecord {
  return LogRecordSchema.parse(typeof item.metrics === 'string' ? { ...item, metrics: JSON.parse(item.metrics) } : item)
}

function parseIdempotencyRecord(item: Record<string, unknown>): IdempotencyRecord {
  const { response } = item
  return IdempotencyRecordSchema.parse(
    typeof response === 'string' ? { ...item, response: JSON.parse(response) } : item,
  )
}

/** Stores every chunk of every group of one log call (idempotent: a repeat rewrites identical items). */
export async function putLogGroups(logId: string, groups: readonly Uint8Array[][]): Promise<void> {
  const items = groups.flatMap((chunks, group) =>
    chunks.map((data, chunk) => ({ ...chunkKey(logId, group, chunk), data })),
  )
  await putAll(items)
}

/** Reads back the chunks of each group of a log call, in request order. */
export async function getLogGroups(record: LogRecord): Promise<Uint8Array[][]> {
  const keys = record.chunks.flatMap((count, group) =>
    Array.from({ length: count }, (_, c) => chunkKey(record.logId, group, c)),
  )
  const byKey = new Map<string, Uint8Array>()
  for (const item of await getAll(keys)) byKey.set(`${item.PK}|${item.SK}`, item.data as Uint8Array)
  return record.chunks.map((count, group) =>
    Array.from({ length: count }, (_, c) => {
      const key = chunkKey(record.logId, group, c)
      const data = byKey.get(`${key.PK}|${key.SK}`)
      if (data === undefined) throw new Error(`Chunk ${c} of group ${group} of log ${record.logId} is missing`)
      return data
    }),
  )
}

/** Writes a log call's record (its history row); idempotent for the same record. */
export async function putLogRecord(record: LogRecord): Promise<void> {
  const item = LogRecordSchema.parse(record)
  await db().send(
    new PutCommand({
      TableName: table(),
      Item: {
        PK: `PMODEL#${record.modelId}`,
        SK: `LOG#${splitPart(record.split)}#${stepPart(record.step)}#${record.recordedAt}#${record.logId}`,
        ...item,
        metrics: JSON.stringify(item.metrics),
      },
    }),
  )
}

/** Lists a model's log records, oldest step first; one split's when given, and only steps after `afterStep`. */
export async function listLogRecords(modelId: string, split?: string, afterStep?: number): Promise<LogRecord[]> {
  const prefix = split === undefined ? 'LOG#' : `LOG#${splitPart(split)}#`
  const lower =
    split !== undefined && afterStep !== undefined && afterStep >= -1 ? `${prefix}${stepPart(afterStep + 1)}` : prefix
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :lo AND :hi',
    ExpressionAttributeValues: { ':pk': `PMODEL#${modelId}`, ':lo': lower, ':hi': `${prefix}\uffff` },
    ConsistentRead: true,
  })
  const records = items.map(parseLogRecord)
  const after = afterStep ?? Number.NEGATIVE_INFINITY
  return records
    .filter((r) => r.step > after)
    .sort((a, b) => a.step - b.step || a.recordedAt.localeCompare(b.recordedAt))
}

/** Lists the log calls stored under exactly (model, split, step), oldest first: where that step's groups are. */
export async function listLogRecordsAt(modelId: string, split: string, step: number): Promise<LogRecord[]> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: { ':pk': `PMODEL#${modelId}`, ':prefix': `LOG#${splitPart(split)}#${stepPart(step)}#` },
    ConsistentRead: true,
  })
  return items.map(parseLogRecord)
}

/** Reads the idempotency record of a key, if the key was used on this model. */
export async function getIdempotencyRecord(modelId: string, key: string): Promise<IdempotencyRecord | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: table(), Key: idemKey(modelId, key), ConsistentRead: true }),
  )
  return Item === undefined ? undefined : parseIdempotencyRecord(Item)
}

/** Claims a key for a log call; returns the record that holds the key (this one when the claim won). */
export async function claimIdempotencyKey(
  modelId: string,
  key: string,
  record: IdempotencyRecord,
): Promise<IdempotencyRecord> {
  const claim = await putIfAbsentOrRead({ ...idemKey(modelId, key), ...IdempotencyRecordSchema.parse(record) }, () =>
    getIdempotencyRecord(modelId, key),
  )
  return claim.written ? record : claim.existing
}

/** Stores the finished response under a claimed key, so later retries replay it. */
export async function completeIdempotencyKey(modelId: string, key: string, response: LogResponse): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: idemKey(modelId, key),
      UpdateExpression: 'SET #response = :response',
      ConditionExpression: 'attribute_exists(PK) AND logId = :logId',
      ExpressionAttributeNames: { '#response': 'response' },
      ExpressionAttributeValues: { ':response': JSON.stringify(response), ':logId': response.log_id },
    }),
  )
}
