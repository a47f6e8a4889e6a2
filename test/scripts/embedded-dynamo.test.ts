import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb'
import { afterAll, describe, expect, it } from 'vitest'
import { bootstrapKey } from '#shared/auth/bootstrap'
import { createApiKey, findApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { rawDb } from '#shared/db/client'
import { ensureTable } from '#shared/db/ensure-table'
import { startEmbeddedDynamo } from '../../scripts/local/embedded-dynamo.js'

const dirs: string[] = []
// Tables a test made besides the file's own (DynamoDB Local's lane shares one process for the run).
const tables: string[] = []
const original = { endpoint: config.dynamoEndpoint, table: config.tableName }

afterAll(async () => {
  config.dynamoEndpoint = original.endpoint
  config.tableName = original.table
  for (const TableName of tables) await rawDb().send(new DeleteTableCommand({ TableName }))
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
})

describe('embedded DynamoDB', () => {
  it('keeps keys across a restart when persisted to the data directory', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-data-'))
    dirs.push(dir)
    const first = await startEmbeddedDynamo(dir)
    config.dynamoEndpoint = first.endpoint
    config.tableName = 'loom'
    await ensureTable('loom')
    const { key } = await createApiKey({ userId: 'persisted', entity: 'acme' })

    // Act: stop, start again on the same directory.
    await first.close()
    const second = await startEmbeddedDynamo(dir)
    config.dynamoEndpoint = second.endpoint
    const createdAgain = await ensureTable('loom')
    const found = await findApiKey(key)
    await second.close()

    // Assess
    expect(createdAgain).toBe(false)
    expect(found?.userId).toBe('persisted')
    expect(await readdir(dir)).toContain('dynamodb')
  })
})

describe('bootstrap key', () => {
  it('registers LOOM_BOOTSTRAP_KEY idempotently, and a table started with it never gets a generated key', async () => {
    // Prepare
    config.dynamoEndpoint = original.endpoint
    config.tableName = original.table
    const key = `k-${Date.now()}`

    // Act
    const once = await bootstrapKey({ key, userId: 'boot-user', entity: 'boot-ent' })
    const twice = await bootstrapKey({ key, userId: 'boot-user', entity: 'boot-ent' })
    const later = await bootstrapKey({ userId: 'boot-user', entity: 'boot-ent' })

    // Assess
    expect(once).toMatchObject({ kind: 'configured', created: true })
    expect(twice).toMatchObject({ kind: 'configured', created: false })
    expect((await findApiKey(key))?.userId).toBe('boot-user')
    expect(later.kind).toBe('none')
  })

  it('generates a key on the first start of a table only', async () => {
    // Prepare: a table of its own, never started
    config.dynamoEndpoint = original.endpoint
    config.tableName = `boot-${Date.now()}`
    tables.push(config.tableName)
    await ensureTable(config.tableName)

    // Act
    const first = await bootstrapKey({ userId: 'boot-user', entity: 'boot-ent' })
    const second = await bootstrapKey({ userId: 'boot-user', entity: 'boot-ent' })

    // Assess
    expect(first.kind).toBe('generated')
    expect(second.kind).toBe('none')
    if (first.kind === 'generated') expect((await findApiKey(first.key))?.entity).toBe('boot-ent')
  })
})
