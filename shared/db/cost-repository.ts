import { deleteAll, putAll } from '#shared/db/batch-write'
import { queryAll } from '#shared/db/query'
import { type PriceRow, PriceRowSchema } from '#shared/schemas/cost'

// Keys: PK=COST#<project> SK=<cost id>. A project's price table is small and always read whole.
const costPk = (project: string) => `COST#${project}`

/** Stores project price rows. */
export async function putPriceRows(project: string, rows: readonly PriceRow[]): Promise<void> {
  await putAll(
    rows.map((row) => ({ PK: costPk(project), SK: row.id, ...row })),
    1,
  )
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
  await deleteAll(ids.map((id) => ({ PK: costPk(project), SK: id })))
}
