import { randomUUID } from 'node:crypto'
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { PutCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it, vi } from 'vitest'
import { db, rawDb, SDK_LOGGER_MIDDLEWARE, table } from '#shared/db/client'

describe('the DynamoDB clients', () => {
  it("leave out the SDK's logger middleware: no call's input or output is filtered for a logger that drops it", async () => {
    // Prepare
    const info = vi.spyOn(rawDb().config.logger, 'info')
    const error = vi.spyOn(rawDb().config.logger, 'error')
    const key = { PK: `CLIENT#${randomUUID()}`, SK: 'x' }

    // Act
    await db().send(new PutCommand({ TableName: table(), Item: { ...key, n: 1 } }))
    const { Item } = await rawDb().send(
      new GetItemCommand({ TableName: table(), Key: { PK: { S: key.PK }, SK: { S: key.SK } } }),
    )
    const failed = await db()
      .send(new PutCommand({ TableName: table(), Item: key, ConditionExpression: 'attribute_not_exists(PK)' }))
      .catch((e: unknown) => e)

    // Assess
    const names = rawDb().middlewareStack.identify()
    expect(names.filter((m) => m.startsWith(SDK_LOGGER_MIDDLEWARE))).toEqual([])
    expect(Item?.n).toEqual({ N: '1' })
    expect((failed as Error).name).toBe('ConditionalCheckFailedException')
    expect(info).not.toHaveBeenCalled()
    expect(error).not.toHaveBeenCalled()
  })
})
