import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'

/** Runs a Query to exhaustion, following `LastEvaluatedKey` across DynamoDB's 1 MB pages. */
export async function queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = []
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(new QueryCommand({ ...input, TableName: table(), ExclusiveStartKey: startKey }))
    items.push(...(page.Items ?? []))
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  return items
}
