import '../support/lambda-shim.js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { app as addItemsApp } from '#functions/tracing/add-annotation-queue-items/handler'
import { app as itemsApp } from '#functions/tracing/query-annotation-queue-items/handler'
import { config } from '#shared/config'
import { type DynamoFaultProxy, startDynamoFaultProxy } from '../support/dynamo-fault-proxy.js'
import { newCalls, newQueue } from '../support/queues.js'
import { newProjectCaller, send } from '../support/tracing.js'

// Retries after partial failures and lost answers on annotation queues, tables and preview models: a retried write
// never duplicates, nothing half-written is visible, and a retry or race is never a 500.

let proxy: DynamoFaultProxy
let restoreEndpoint: () => void
const saved = { ...config.dynamo }

beforeAll(async () => {
  proxy = await startDynamoFaultProxy()
  restoreEndpoint = proxy.use()
})

beforeEach(() => {
  // Real backoff shapes, tiny waits: the suite stays fast while every retry still happens.
  Object.assign(config.dynamo, { ...saved, retryBaseMs: 1, retryMaxDelayMs: 5 })
})

afterEach(() => {
  proxy.clear()
})

afterAll(async () => {
  Object.assign(config.dynamo, saved)
  restoreEndpoint()
  await proxy.close()
})

describe('POST /annotation_queues/{id}/items after a partial failure', () => {
  it('adds the call on retry when the first attempt claimed it but failed to write the item', async () => {
    // Prepare
    const c = await newProjectCaller()
    const [callId] = await newCalls(c, 1)
    const queueId = await newQueue(c)
    const path = `/annotation_queues/${queueId}/items`
    const body = { project_id: c.project, call_ids: [callId], display_fields: ['inputs'] }
    // The claim (first PutItem) is stored; the item (second) never is.
    proxy.inject({ fault: 'unavailable', operations: ['PutItem'], skip: 1 })
    const failed = await send(addItemsApp, path, body, c)
    proxy.clear()

    // Act
    const retried = await send(addItemsApp, path, body, c)
    const again = await send(addItemsApp, path, body, c)

    // Assess
    const items = await send(itemsApp, `${path}/query`, { project_id: c.project }, c)
    expect(failed.status).toBe(503)
    expect(retried).toEqual({ status: 200, body: { added_count: 1, duplicates: 0 } })
    expect(again).toEqual({ status: 200, body: { added_count: 0, duplicates: 1 } })
    expect(items.body.items.map((i: { call_id: string }) => i.call_id)).toEqual([callId])
  })
})
