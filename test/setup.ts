import { randomUUID } from 'node:crypto'
import { afterAll } from 'vitest'
import { config } from '#shared/config'
import { ensureTable } from '#shared/db/ensure-table'
import { settleAfterResponse } from '#shared/http/after-response'
import { flushUsage } from '#shared/inference/usage-meter'
import { resetFileState } from './setup-common.js'
import { startTestDynamo } from './support/dynamo.js'

resetFileState()

// One embedded DynamoDB per test file (or the run's DynamoDB Local in its lane), with the file's own table; tests use
// unique ids so they never share state.
const dynamo = await startTestDynamo()
config.dynamoEndpoint = dynamo.endpoint
config.tableName = `loom-test-${randomUUID().slice(0, 8)}`
await ensureTable(config.tableName)

afterAll(async () => {
  // Work that outlives its response (completion traces, the batched usage flush) ends before the store closes, or
  // it would write into a closed dynalite.
  await settleAfterResponse()
  await flushUsage().catch(() => undefined)
  await dynamo.close()
})
