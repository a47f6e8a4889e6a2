import { readFile } from 'node:fs/promises'
import { config, localConfig } from '#shared/config'
import { ensureTable } from '#shared/db/ensure-table'
import { startLocalDynamo } from './dynamo-engine.js'
import { endpointFile } from './embedded-dynamo.js'

async function reachable(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(1_000) })
    return true
  } catch {
    return false
  }
}

/**
 * Points `config` at the table a CLI should administer: the configured endpoint or AWS table, else the running local
 * stack's embedded DynamoDB, else the local data directory opened directly. Returns how to release it.
 */
export async function connectLocalTable(): Promise<{ close: () => Promise<void> }> {
  if (config.dynamoEndpoint !== undefined || config.tableName !== undefined) {
    config.tableName ??= 'loom'
    return { close: async () => undefined }
  }
  config.tableName = 'loom'
  const published = await readFile(endpointFile(localConfig.dataDir), 'utf8').catch(() => undefined)
  if (published !== undefined && (await reachable(published.trim()))) {
    config.dynamoEndpoint = published.trim()
    await ensureTable(config.tableName)
    return { close: async () => undefined }
  }
  const dynamo = await startLocalDynamo(localConfig.dynamoEngine, localConfig.dataDir)
  config.dynamoEndpoint = dynamo.endpoint
  await ensureTable(config.tableName)
  return { close: dynamo.close }
}
