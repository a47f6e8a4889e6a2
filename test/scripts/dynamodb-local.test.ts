import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createApiKey, findApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { LOCAL_CREDENTIALS } from '#shared/db/client'
import { ensureTable } from '#shared/db/ensure-table'
import { startDynamoDbLocal } from '../../scripts/local/dynamodb-local.js'
import { endpointFile } from '../../scripts/local/embedded-dynamo.js'

const dirs: string[] = []
const original = { endpoint: config.dynamoEndpoint, table: config.tableName }

afterAll(async () => {
  config.dynamoEndpoint = original.endpoint
  config.tableName = original.table
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(2_000) })
    return true
  } catch {
    return false
  }
}

describe('local DynamoDB credentials', () => {
  it('are letters and digits only, as DynamoDB Local requires of an access key id', () => {
    expect(LOCAL_CREDENTIALS.accessKeyId).toMatch(/^[A-Za-z0-9]+$/)
  })
})

describe('startDynamoDbLocal', () => {
  it('keeps data under the data directory across a restart, publishes its endpoint, and leaves no JVM behind', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-ddb-local-'))
    dirs.push(dir)
    const first = await startDynamoDbLocal({ dataDir: dir })
    config.dynamoEndpoint = first.endpoint
    config.tableName = 'loom'
    await ensureTable('loom')
    const { key } = await createApiKey({ userId: 'persisted', entity: 'acme' })
    const published = await readFile(endpointFile(dir), 'utf8')

    // Act: stop, start again on the same directory.
    await first.close()
    const firstAnswersAfterClose = await answers(first.endpoint)
    const second = await startDynamoDbLocal({ dataDir: dir })
    config.dynamoEndpoint = second.endpoint
    const createdAgain = await ensureTable('loom')
    const found = await findApiKey(key)
    await second.close()

    // Assess: the requests above went through the SDK signed with Loom's local credentials.
    expect(first.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(published).toBe(first.endpoint)
    expect(firstAnswersAfterClose).toBe(false)
    expect(createdAgain).toBe(false)
    expect(found?.userId).toBe('persisted')
    expect(await readdir(join(dir, 'dynamodb-local'))).toContain('shared-local-instance.db')
    expect(await answers(second.endpoint)).toBe(false)
  }, 120_000)

  it('says in one line what to install when Java is missing', async () => {
    const started = startDynamoDbLocal({ java: 'loom-no-such-java' })
    await expect(started).rejects.toThrow(
      /^DynamoDB Local needs Java 17 or newer: install a Java runtime .* and put `java` on PATH \(`loom-no-such-java` not found\)$/,
    )
  })
})
