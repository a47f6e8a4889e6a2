import { randomBytes, randomUUID } from 'node:crypto'
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { db, table } from '#shared/db/client'
import { deleteLargeValue, getLargeValue, loadJson, putLargeValue, storeJson } from '#shared/db/large-value'

const ownerOf = () => ({ pk: `TEST#${randomUUID()}`, skPrefix: 'VAL' })

// COUNT is per 1 MB page too, so follow the pages.
async function chunkCount(pk: string): Promise<number> {
  let count = 0
  let startKey: Record<string, unknown> | undefined
  do {
    const res = await db().send(
      new QueryCommand({
        TableName: table(),
        Select: 'COUNT',
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ExclusiveStartKey: startKey,
      }),
    )
    count += res.Count ?? 0
    startKey = res.LastEvaluatedKey
  } while (startKey !== undefined)
  return count
}

describe('large values', () => {
  it('stores 1.2 MB of bytes across chunk items and reads them back byte-identically', async () => {
    // Prepare
    const owner = ownerOf()
    const bytes = randomBytes(1_200_000)

    // Act
    const ref = await putLargeValue(owner, bytes)
    const back = await getLargeValue(owner, ref)

    // Assess
    expect(ref.chunks).toBe(4)
    expect(ref.bytes).toBe(1_200_000)
    expect(Buffer.compare(Buffer.from(back), bytes)).toBe(0)
    expect(await chunkCount(owner.pk)).toBe(4)
  })

  it('keeps small JSON inline and chunks JSON over the inline limit without truncating it', async () => {
    // Prepare
    const owner = ownerOf()
    const big = JSON.stringify({ text: 'é'.repeat(300_000), n: [1.5, -2, null], nested: { emoji: '😀' } })
    const small = JSON.stringify({ a: 1 })

    // Act
    const storedBig = await storeJson(owner, big)
    const storedSmall = await storeJson(owner, small)

    // Assess
    expect(Buffer.byteLength(big)).toBeGreaterThan(400_000)
    expect(storedSmall).toEqual({ json: small })
    expect('ref' in storedBig).toBe(true)
    expect(await loadJson(owner, storedBig)).toBe(big)
  })

  it('writes the same value twice idempotently and keeps an older value readable after a new one', async () => {
    // Prepare
    const owner = ownerOf()
    const first = randomBytes(500_000)
    const second = randomBytes(450_000)

    // Act
    const refA = await putLargeValue(owner, first)
    const refA2 = await putLargeValue(owner, first)
    const refB = await putLargeValue(owner, second)

    // Assess
    expect(refA2).toEqual(refA)
    expect(Buffer.compare(Buffer.from(await getLargeValue(owner, refA)), first)).toBe(0)
    expect(Buffer.compare(Buffer.from(await getLargeValue(owner, refB)), second)).toBe(0)
    expect(await chunkCount(owner.pk)).toBe(4)
  })

  it('deletes chunk items and then reports a missing value instead of returning partial bytes', async () => {
    // Prepare
    const owner = ownerOf()
    const ref = await putLargeValue(owner, randomBytes(800_000))

    // Act
    await deleteLargeValue(owner, ref)

    // Assess
    expect(await chunkCount(owner.pk)).toBe(0)
    await expect(getLargeValue(owner, ref)).rejects.toThrow(/incomplete/)
    const gone = await db().send(new GetCommand({ TableName: table(), Key: { PK: owner.pk, SK: 'VAL' } }))
    expect(gone.Item).toBeUndefined()
  })
})
