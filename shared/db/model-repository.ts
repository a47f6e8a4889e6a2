import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb'
import { db, type SendOptions, table } from '#shared/db/client'
import { queryAll } from '#shared/db/query'
import { type CatalogModel, CatalogModelSchema, StoredCatalogModelSchema } from '#shared/schemas/model'

// Keys: PK=MODELS SK=MODEL#<id>. The catalog is small (tens to hundreds of models) and read whole, then cached,
// so one partition serves every listing with a single Query.
const PARTITION = 'MODELS'
const keyOf = (id: string) => ({ PK: PARTITION, SK: `MODEL#${id}` })

// Lenient where writes are strict: an entry that fails today's checks still reads, or it would fail every listing.
function toModel(item: Record<string, unknown>): CatalogModel {
  return StoredCatalogModelSchema.parse(item)
}

/** Stores a catalog model, replacing any entry with the same id (an upsert, so retries are harmless). */
export async function putModel(model: CatalogModel): Promise<void> {
  const item = CatalogModelSchema.parse(model)
  await db().send(
    new PutCommand({ TableName: table(), Item: { ...keyOf(model.id), ...item, updatedAt: new Date().toISOString() } }),
  )
}

/** Reads one catalog model by id. */
export async function getModel(id: string): Promise<CatalogModel | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: keyOf(id), ConsistentRead: true }))
  return Item === undefined ? undefined : toModel(Item)
}

/** Lists every catalog model, ordered by id. */
export async function listModels(options?: SendOptions): Promise<CatalogModel[]> {
  const items = await queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': PARTITION, ':sk': 'MODEL#' },
    },
    options,
  )
  return items.map(toModel)
}

/** Removes a catalog model; returns false when there was none. */
export async function deleteModel(id: string): Promise<boolean> {
  const { Attributes } = await db().send(
    new DeleteCommand({ TableName: table(), Key: keyOf(id), ReturnValues: 'ALL_OLD' }),
  )
  return Attributes !== undefined
}
