import { randomUUID } from 'node:crypto'
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb'
import { describe, expect, it } from 'vitest'
import { rawDb } from '#shared/db/client'
import { ensureTable } from '#shared/db/ensure-table'
import { type DynamoFaultProxy, useDynamoFaultProxy } from '../../support/dynamo-fault-proxy.js'

let proxy: DynamoFaultProxy
useDynamoFaultProxy((started) => {
  proxy = started
})

describe('ensureTable', () => {
  it('creates a missing table once even when the CreateTable answer is lost and the SDK retries it', async () => {
    // Prepare: the first CreateTable is applied, then its answer is lost; the SDK's retry meets the table.
    const name = `ensure-${randomUUID()}`
    proxy.inject({ fault: 'drop-after-apply', operations: ['CreateTable'], times: 1 })

    // Act
    const created = await ensureTable(name)
    const again = await ensureTable(name)
    const { Table } = await rawDb().send(new DescribeTableCommand({ TableName: name }))

    // Assess
    expect(proxy.seen('CreateTable')).toBe(2)
    expect(created).toBe(true)
    expect(again).toBe(false)
    expect(Table?.TableStatus).toBe('ACTIVE')
  })
})
