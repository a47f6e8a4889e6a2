import { randomUUID } from 'node:crypto'
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb'
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { db, table } from '#shared/db/client'
import {
  ifConditionHolds,
  isConditionFailed,
  putIfAbsent,
  putIfAbsentOrRead,
  updateIfExists,
} from '#shared/db/conditional-write'
import { ConflictError } from '#shared/errors/http-error'

const newKey = () => ({ PK: `TEST#${randomUUID()}`, SK: 'ITEM' })

async function stored(key: Record<string, unknown>) {
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))
  return Item
}

async function conditionError(): Promise<unknown> {
  return db()
    .send(
      new UpdateCommand({
        TableName: table(),
        Key: newKey(),
        UpdateExpression: 'SET n = :n',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':n': 1 },
      }),
    )
    .then(
      () => undefined,
      (error: unknown) => error,
    )
}

describe('putIfAbsent', () => {
  it('writes an absent item, then answers exists and leaves the first item as it was', async () => {
    // Prepare
    const key = newKey()

    // Act
    const first = await putIfAbsent({ ...key, v: 'first' })
    const retried = await putIfAbsent({ ...key, v: 'second' })

    // Assess
    expect(first).toBe('written')
    expect(retried).toBe('exists')
    expect(await stored(key)).toEqual({ ...key, v: 'first' })
  })

  it('lets exactly one of many concurrent puts of one key write', async () => {
    // Prepare
    const key = newKey()

    // Act
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, n) => putIfAbsent({ ...key, n })))

    // Assess
    expect(outcomes.filter((o) => o === 'written')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'exists')).toHaveLength(9)
    const winner = outcomes.indexOf('written')
    expect(await stored(key)).toEqual({ ...key, n: winner })
  })
})

describe('putIfAbsentOrRead', () => {
  it('writes an absent item without reading', async () => {
    // Prepare
    const key = newKey()
    let reads = 0

    // Act
    const result = await putIfAbsentOrRead({ ...key, v: 'first' }, async () => {
      reads++
      return 'unused'
    })

    // Assess
    expect(result).toEqual({ written: true })
    expect(reads).toBe(0)
    expect(await stored(key)).toEqual({ ...key, v: 'first' })
  })

  it('returns what the read finds when the key exists, and keeps the stored item', async () => {
    // Prepare
    const key = newKey()
    await putIfAbsent({ ...key, v: 'first' })

    // Act
    const result = await putIfAbsentOrRead({ ...key, v: 'second' }, async () => (await stored(key))?.v as string)

    // Assess
    expect(result).toEqual({ written: false, existing: 'first' })
    expect(await stored(key)).toEqual({ ...key, v: 'first' })
  })

  it('puts again when the item was deleted between the refused put and the read', async () => {
    // Prepare: a create racing a delete of the same key
    const key = newKey()
    await putIfAbsent({ ...key, v: 'first' })
    let reads = 0

    // Act
    const result = await putIfAbsentOrRead({ ...key, v: 'second' }, async () => {
      reads++
      await db().send(new DeleteCommand({ TableName: table(), Key: key }))
      return undefined
    })

    // Assess
    expect(result).toEqual({ written: true })
    expect(reads).toBe(1)
    expect(await stored(key)).toEqual({ ...key, v: 'second' })
  })

  it('answers 409 when the key stays taken but the read keeps finding nothing', async () => {
    // Prepare
    const key = newKey()
    await putIfAbsent({ ...key, v: 'first' })
    let reads = 0

    // Act
    const outcome = putIfAbsentOrRead({ ...key, v: 'second' }, async () => {
      reads++
      return undefined
    })

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(ConflictError)
    expect(reads).toBe(3)
    expect(await stored(key)).toEqual({ ...key, v: 'first' })
  })
})

describe('updateIfExists', () => {
  it('updates an existing item and returns the update output', async () => {
    // Prepare
    const key = newKey()
    await putIfAbsent({ ...key, v: 'first' })

    // Act
    const out = await updateIfExists({
      Key: key,
      UpdateExpression: 'SET v = :v',
      ExpressionAttributeValues: { ':v': 'updated' },
      ReturnValues: 'ALL_NEW',
    })

    // Assess
    expect(out?.Attributes).toEqual({ ...key, v: 'updated' })
    expect(await stored(key)).toEqual({ ...key, v: 'updated' })
  })

  it('answers undefined for a missing item and creates nothing', async () => {
    // Prepare
    const key = newKey()

    // Act
    const out = await updateIfExists({
      Key: key,
      UpdateExpression: 'SET v = :v',
      ExpressionAttributeValues: { ':v': 1 },
    })

    // Assess
    expect(out).toBeUndefined()
    expect(await stored(key)).toBeUndefined()
  })
})

describe('ifConditionHolds', () => {
  it('returns the output of a write whose condition holds', async () => {
    // Prepare
    const key = newKey()
    await putIfAbsent({ ...key, holder: 'me' })

    // Act
    const out = await ifConditionHolds(
      db().send(
        new DeleteCommand({
          TableName: table(),
          Key: key,
          ConditionExpression: 'holder = :h',
          ExpressionAttributeValues: { ':h': 'me' },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    )

    // Assess
    expect(out?.Attributes).toEqual({ ...key, holder: 'me' })
    expect(await stored(key)).toBeUndefined()
  })

  it('answers undefined when the condition fails on an update, leaving the item unchanged', async () => {
    // Prepare
    const key = newKey()
    await putIfAbsent({ ...key, n: 1 })

    // Act
    const out = await ifConditionHolds(
      db().send(
        new UpdateCommand({
          TableName: table(),
          Key: key,
          UpdateExpression: 'SET n = :next',
          ConditionExpression: 'n = :seen',
          ExpressionAttributeValues: { ':next': 3, ':seen': 2 },
        }),
      ),
    )

    // Assess
    expect(out).toBeUndefined()
    expect(await stored(key)).toEqual({ ...key, n: 1 })
  })

  it('throws errors other than a failed condition unchanged', async () => {
    // Prepare: a condition expression DynamoDB cannot parse.
    const write = db().send(
      new PutCommand({
        TableName: table(),
        Item: newKey(),
        ConditionExpression: 'attribute_not_exists(',
      }),
    )

    // Act
    const outcome = ifConditionHolds(write)

    // Assess
    await expect(outcome).rejects.toMatchObject({ name: 'ValidationException' })
  })
})

describe('isConditionFailed', () => {
  it('classifies the error DynamoDB answers for a failed condition, and nothing else', async () => {
    // Prepare
    const failed = await conditionError()
    const invalid = await db()
      .send(new PutCommand({ TableName: table(), Item: newKey(), ConditionExpression: 'attribute_not_exists(' }))
      .then(
        () => undefined,
        (error: unknown) => error,
      )

    // Act
    const verdicts = [failed, invalid, new Error('ConditionalCheckFailedException'), undefined].map(isConditionFailed)

    // Assess
    expect(failed).toBeInstanceOf(ConditionalCheckFailedException)
    expect(verdicts).toEqual([true, false, false, false])
  })
})
