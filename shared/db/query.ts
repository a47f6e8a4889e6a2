import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb'
import { db, type SendOptions, sendAs, table } from '#shared/db/client'

/** Runs a Query to exhaustion, following `LastEvaluatedKey` across DynamoDB's 1 MB pages (as `options` say). */
export async function queryAll(
  input: Omit<QueryCommandInput, 'TableName'>,
  options?: SendOptions,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = []
  let startKey: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      sendAs(new QueryCommand({ ...input, TableName: table(), ExclusiveStartKey: startKey }), options),
    )
    items.push(...(page.Items ?? []))
    startKey = page.LastEvaluatedKey
  } while (startKey !== undefined)
  return items
}
