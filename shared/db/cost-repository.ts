import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { queryAll } from '#shared/db/query'
import { type PriceRow, PriceRowSchema } from '#shared/schemas/cost'

// Keys: PK=COST#<project> SK=<cost id>. A project's price table is small and always read whole.
const costPk = (project: string) => `COST#${project}`

/** Stores project price rows. */
export async function putPriceRows(project: string, rows: readonly PriceRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 25) {
    let requests = rows
      .slice(i, i + 25)
      .map((row) => ({ PutRequest: { Item: { PK: costPk(project), SK: row.id, ...row } } }))
    while (requests.length > 0) {
      const res = await db().send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }))
      requests = (res.UnprocessedItems?.[table()] ?? []) as typeof requests
    }
  }
}

/** Lists a project's own price rows. */
export async function listPriceRows(project: string): Promise<PriceRow[]> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': costPk(project) },
  })
  return items.map((item) => PriceRowSchema.parse(item))
}

/** Deletes price rows of a project by id (idempotent). */
export async function deletePriceRows(project: string, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 25) {
    let requests = ids.slice(i, i + 25).map((id) => ({ DeleteRequest: { Key: { PK: costPk(project), SK: id } } }))
    while (requests.length > 0) {
      const res = await db().send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }))
      requests = (res.UnprocessedItems?.[table()] ?? []) as typeof requests
    }
  }
}
