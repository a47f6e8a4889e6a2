import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { db, type SendOptions, sendAs, table } from '#shared/db/client'
import { ifConditionHolds, putIfAbsentOrRead, updateIfExists } from '#shared/db/conditional-write'
import { queryIndexAll } from '#shared/db/index-query'
import { type ApiKeyRecord, ApiKeyRecordSchema } from '#shared/schemas/api-key'
import { LIMIT_NAMES, type RateLimits } from '#shared/schemas/rate-limit'

// Keys: PK=APIKEY#<keyId> SK=APIKEY. GSI1 lists a user's keys, GSI2 every key (admin listing, small).
const keyOf = (keyId: string) => ({ PK: `APIKEY#${keyId}`, SK: 'APIKEY' })

function toRecord(item: Record<string, unknown>): ApiKeyRecord {
  return ApiKeyRecordSchema.parse(item)
}

/** Stores a key record unless one with the same id exists; returns the stored record (new or existing). */
export async function putApiKey(record: ApiKeyRecord): Promise<{ record: ApiKeyRecord; created: boolean }> {
  const item = {
    ...keyOf(record.keyId),
    GSI1PK: `USER#${record.userId}`,
    GSI1SK: `APIKEY#${record.createdAt}#${record.keyId}`,
    GSI2PK: 'APIKEYS',
    GSI2SK: `${record.createdAt}#${record.keyId}`,
    ...record,
  }
  const put = await putIfAbsentOrRead(item, () => getApiKey(record.keyId))
  return put.written ? { record, created: true } : { record: put.existing, created: false }
}

/** Reads one key record by id. */
export async function getApiKey(keyId: string, options?: SendOptions): Promise<ApiKeyRecord | undefined> {
  const { Item } = await db().send(
    sendAs(new GetCommand({ TableName: table(), Key: keyOf(keyId), ConsistentRead: true }), options),
  )
  return Item === undefined ? undefined : toRecord(Item)
}

/** Lists keys, newest last; one user's when `userId` is given. */
export async function listApiKeys(userId?: string): Promise<ApiKeyRecord[]> {
  const items = await queryIndexAll(
    userId === undefined
      ? { IndexName: 'GSI2', KeyConditionExpression: 'GSI2PK = :pk', ExpressionAttributeValues: { ':pk': 'APIKEYS' } }
      : {
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
          ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':sk': 'APIKEY#' },
        },
  )
  return items.map(toRecord)
}

/** Marks a key revoked (idempotent); returns false when no such key exists. */
export async function revokeApiKey(keyId: string, at: string): Promise<boolean> {
  const out = await updateIfExists({
    Key: keyOf(keyId),
    UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :at)',
    ExpressionAttributeValues: { ':at': at },
  })
  return out !== undefined
}

/** A change of a key's limits: a number sets the limit, `null` removes it, an absent name leaves it as it is. */
export type LimitChange = { [K in keyof RateLimits]?: number | null }

/**
 * Sets or removes the limits of a key that exists and is not revoked, in one conditional write (a revoke that lands
 * first, even between a caller's read and this write, leaves the revoked key untouched). Returns the updated record,
 * or undefined when nothing was written: no such key, or a revoked one (read it to tell which).
 */
export async function setActiveApiKeyLimits(keyId: string, change: LimitChange): Promise<ApiKeyRecord | undefined> {
  const set: string[] = []
  const remove: string[] = []
  const values: Record<string, unknown> = {}
  for (const name of LIMIT_NAMES) {
    const value = change[name]
    if (value === null) remove.push(name)
    else if (value !== undefined) {
      set.push(`${name} = :${name}`)
      values[`:${name}`] = value
    }
  }
  if (set.length === 0 && remove.length === 0) {
    const record = await getApiKey(keyId)
    return record?.revokedAt === undefined ? record : undefined
  }
  const update = [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : '']
  const out = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: keyOf(keyId),
        UpdateExpression: update.join(' ').trim(),
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(revokedAt)',
        ...(set.length ? { ExpressionAttributeValues: values } : {}),
        ReturnValues: 'ALL_NEW',
      }),
    ),
  )
  return out?.Attributes === undefined ? undefined : toRecord(out.Attributes)
}
