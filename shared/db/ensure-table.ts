import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb'
import { rawDb } from '#shared/db/client'
import { createTableInput } from '#shared/db/table'

async function waitActive(tableName: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const { Table } = await rawDb().send(new DescribeTableCommand({ TableName: tableName }))
    const indexesReady = (Table?.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE')
    if (Table?.TableStatus === 'ACTIVE' && indexesReady) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`Table ${tableName} did not become active`)
}

/**
 * Creates the table from the shared definition when it is missing, and adds any index the definition has gained
 * since the table was created (one `UpdateTable` per index, as DynamoDB requires). Returns whether it created it.
 */
export async function ensureTable(tableName: string): Promise<boolean> {
  const wanted = createTableInput(tableName)
  let existing: string[]
  try {
    const { Table } = await rawDb().send(new DescribeTableCommand({ TableName: tableName }))
    existing = (Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName ?? '')
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error
    try {
      await rawDb().send(new CreateTableCommand(wanted))
    } catch (createError) {
      // The table appeared between the two calls: another process created it, or this one did and the SDK retried
      // a CreateTable whose answer timed out (retries are not idempotent here). Either way it now exists.
      if (!(createError instanceof ResourceInUseException)) throw createError
    }
    await waitActive(tableName)
    return true
  }
  for (const index of wanted.GlobalSecondaryIndexes ?? []) {
    if (existing.includes(index.IndexName ?? '')) continue
    const keys = new Set(index.KeySchema?.map((k) => k.AttributeName))
    await rawDb().send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: wanted.AttributeDefinitions?.filter((a) => keys.has(a.AttributeName)),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    )
    await waitActive(tableName)
  }
  return false
}
