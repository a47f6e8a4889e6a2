import { GetCommand, NumberValue, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { db, table } from '#shared/db/client'
import { assertItemFits } from '#shared/db/item-size'
import { keyPart } from '#shared/db/key-part'
import { ItemTooLargeError, KeyTooLongError, UnstorableValueError } from '#shared/errors/storage-limit-errors'

const uid = () => Math.random().toString(36).slice(2)
// What a request threw (or undefined): awaited at once, so no rejection is left unhandled between steps.
const thrown = (p: Promise<unknown>) => p.then(() => undefined).catch((e: unknown) => e)

// The client refuses, before sending, what DynamoDB's documented limits refuse, on every engine alike.
describe('DynamoDB limits checked by the client', () => {
  it('refuses a sort key over 1,024 UTF-8 bytes and stores nothing, but takes exactly 1,024', async () => {
    // Prepare
    const pk = `LIMITS#${uid()}`
    const fits = 'é'.repeat(512)
    const over = `${fits}x`

    // Act
    const refused = await thrown(db().send(new PutCommand({ TableName: table(), Item: { PK: pk, SK: over } })))
    await db().send(new PutCommand({ TableName: table(), Item: { PK: pk, SK: fits } }))

    // Assess
    expect(refused).toBeInstanceOf(KeyTooLongError)
    const stored = await db().send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      }),
    )
    expect(stored.Items?.map((i) => i.SK)).toEqual([fits])
  })

  it('refuses GSI keys over their limits, in items and in update expressions', async () => {
    // Prepare
    const key = { PK: `LIMITS#${uid()}`, SK: 'S' }

    // Act
    const put = await thrown(
      db().send(new PutCommand({ TableName: table(), Item: { ...key, GSI2PK: 'p'.repeat(2049), GSI2SK: 's' } })),
    )
    const update = await thrown(
      db().send(
        new UpdateCommand({
          TableName: table(),
          Key: key,
          UpdateExpression: 'SET #k = :v',
          ExpressionAttributeNames: { '#k': 'GSI1SK' },
          ExpressionAttributeValues: { ':v': 's'.repeat(1025) },
        }),
      ),
    )

    // Assess
    expect(put).toBeInstanceOf(KeyTooLongError)
    expect(update).toBeInstanceOf(KeyTooLongError)
    expect((await db().send(new GetCommand({ TableName: table(), Key: key }))).Item).toBeUndefined()
  })

  it('refuses an item over 400 KB, an empty key value and a number outside the range', async () => {
    // Prepare
    const key = { PK: `LIMITS#${uid()}`, SK: 'S' }
    const put = (item: Record<string, unknown>) => thrown(db().send(new PutCommand({ TableName: table(), Item: item })))

    // Act
    const big = await put({ ...key, data: 'x'.repeat(400 * 1024) })
    const empty = await put({ ...key, GSI1PK: '', GSI1SK: 's' })
    // The document client itself refuses unsafe JavaScript integers; a NumberValue reaches DynamoDB's own range.
    const huge = await put({ ...key, n: NumberValue.from('1e126') })
    const tiny = await put({ ...key, n: 1e-131 })

    // Assess
    expect(big).toBeInstanceOf(ItemTooLargeError)
    expect(empty).toBeInstanceOf(UnstorableValueError)
    expect(huge).toBeInstanceOf(UnstorableValueError)
    expect(tiny).toBeInstanceOf(UnstorableValueError)
    expect((await db().send(new GetCommand({ TableName: table(), Key: key }))).Item).toBeUndefined()
  })

  it('refuses a key condition value longer than a partition key can be', async () => {
    // Act
    const query = await thrown(
      db().send(
        new QueryCommand({
          TableName: table(),
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': 'p'.repeat(2049) },
        }),
      ),
    )

    // Assess
    expect(query).toBeInstanceOf(KeyTooLongError)
  })
})

describe('assertItemFits and keyPart', () => {
  it('size an item before writing: keys by their limits, the item with room kept for later writes', () => {
    // Assess
    expect(() => assertItemFits({ PK: 'p', SK: 's'.repeat(1025) }, 'row')).toThrow(KeyTooLongError)
    expect(() => assertItemFits({ PK: 'p', SK: 's', v: 'x'.repeat(400_000) }, 'row', 10_000)).toThrow(ItemTooLargeError)
    expect(() => assertItemFits({ PK: 'p', SK: 's', v: 'x'.repeat(400_000) }, 'row')).not.toThrow()
  })

  it('keep a long value out of a key as a fixed-length digest, the same for the same value', () => {
    // Prepare
    const long = 'v'.repeat(1_500_000)

    // Assess
    expect(keyPart('short')).toBe('short')
    expect(keyPart(long)).toMatch(/^~[A-Za-z0-9_-]{43}$/)
    expect(keyPart(long)).toBe(keyPart(`${'v'.repeat(1_499_999)}v`))
    expect(keyPart(long)).not.toBe(keyPart(`${long}w`))
  })
})
