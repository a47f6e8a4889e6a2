import { randomUUID } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startDynamoDbLocal } from '../../scripts/local/dynamodb-local.js'
import { endpointFile } from '../../scripts/local/embedded-dynamo.js'
import { sharedDynamoDbLocal } from '../support/dynamo.js'
import { type LocalStack, startLocalStack } from '../support/local-stack.js'
import { tempDirs } from '../support/temp-dirs.js'

const tempDir = tempDirs('loom-start-ddb-local-')

const BASIC = { authorization: `Basic ${Buffer.from('api:k').toString('base64')}`, 'content-type': 'application/json' }

async function post(stack: LocalStack, path: string, body: unknown): Promise<Response> {
  return fetch(`${stack.url}${path}`, { method: 'POST', headers: BASIC, body: JSON.stringify(body) })
}

async function callCount(stack: LocalStack, project: string): Promise<unknown> {
  const res = await post(stack, '/calls/query_stats', { project_id: project })
  return { status: res.status, body: await res.json() }
}

async function startCall(stack: LocalStack, project: string): Promise<number> {
  const start = { project_id: project, id: randomUUID(), op_name: 'op', started_at: '2025-01-01T00:00:00Z' }
  const res = await post(stack, '/call/start', { start: { ...start, attributes: {}, inputs: {} } })
  return res.status
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(2_000) })
    return true
  } catch {
    return false
  }
}

describe('npm start on DynamoDB Local', () => {
  it('LOOM_DYNAMODB=local launches DynamoDB Local with data under the data dir, kept across restarts', async () => {
    // Prepare
    const dir = await tempDir()
    const env = { LOOM_DYNAMODB: 'local', LOOM_DATA_DIR: join(dir, 'data'), LOOM_BOOTSTRAP_KEY: 'k' }
    const project = 'local/demo'

    // Act
    const first = await startLocalStack(env, dir)
    const started = await startCall(first, project)
    const published = await readFile(endpointFile(join(dir, 'data')), 'utf8')
    await first.stop()
    const jvmAfterStop = await answers(published)
    const second = await startLocalStack(env, dir)
    const countAfterRestart = await callCount(second, project)
    await second.stop()

    // Assess
    expect(first.output()).toMatch(/DynamoDB:\s+DynamoDB Local, \S+data \(table loom\)/)
    expect(started).toBe(200)
    expect(jvmAfterStop).toBe(false)
    expect(countAfterRestart).toMatchObject({ status: 200, body: { count: 1 } })
    expect(await readdir(join(dir, 'data'))).toEqual(expect.arrayContaining(['dynamodb-local', 'dynamodb-endpoint']))
    expect(await readdir(join(dir, 'data'))).not.toContain('dynamodb')
  }, 180_000)

  it('DYNAMODB_ENDPOINT pointing at a DynamoDB Local started beside it serves tracing and inference', async () => {
    // Prepare: the lane's shared DynamoDB Local, or one of its own.
    const dir = await tempDir()
    const own = sharedDynamoDbLocal() === undefined ? await startDynamoDbLocal() : undefined
    const endpoint = sharedDynamoDbLocal() ?? own?.endpoint ?? ''
    const table = `loom-start-${randomUUID().slice(0, 8)}`
    const project = 'local/demo'

    try {
      // Act
      const stack = await startLocalStack(
        { DYNAMODB_ENDPOINT: endpoint, LOOM_TABLE_NAME: table, LOOM_BOOTSTRAP_KEY: 'k' },
        dir,
      )
      const models = await fetch(`${stack.url}/v1/models`, { headers: { authorization: 'Bearer k' } })
      const started = await startCall(stack, project)
      const count = await callCount(stack, project)
      await stack.stop()

      // Assess
      expect(stack.output()).toContain(`DynamoDB:         ${endpoint} (table ${table})`)
      expect(models.status).toBe(200)
      expect(started).toBe(200)
      expect(count).toMatchObject({ status: 200, body: { count: 1 } })
      expect(await readdir(dir)).toEqual([])
    } finally {
      await own?.close()
    }
  }, 180_000)
})
