import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { config, localConfig } from '#shared/config'
import { ensureTable } from '#shared/db/ensure-table'
import { lockDataDir } from './data-dir-lock.js'
import { startLocalDynamo } from './dynamo-engine.js'
import { type EmbeddedDynamo, endpointFile, tableNameFile } from './embedded-dynamo.js'

async function reachable(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(1_000) })
    return true
  } catch {
    return false
  }
}

/**
 * Points `config` at the table a CLI (`command`, as the lock names it) should administer: the configured endpoint or
 * AWS table, else the running local stack's embedded DynamoDB, else the local data directory opened directly, which
 * `notice` then names (a stack kept in memory publishes no endpoint: a user who meant it should see that the CLI went
 * elsewhere). Returns how to release it. Throws a `SetupError` when another process holds the data directory without
 * answering on its endpoint.
 */
export async function connectLocalTable(
  command: string,
  notice: (line: string) => void,
): Promise<{ close: () => Promise<void> }> {
  if (config.dynamoEndpoint !== undefined || config.tableName !== undefined) {
    config.tableName ??= 'loom'
    return { close: async () => undefined }
  }
  // The table the stack of this data directory serves (its LOOM_TABLE_NAME), `loom` unless it recorded another.
  const recorded = await readFile(tableNameFile(localConfig.dataDir), 'utf8').catch(() => undefined)
  config.tableName = recorded?.trim() || 'loom'
  const published = await readFile(endpointFile(localConfig.dataDir), 'utf8').catch(() => undefined)
  if (published !== undefined && (await reachable(published.trim()))) {
    config.dynamoEndpoint = published.trim()
    await ensureTable(config.tableName)
    return { close: async () => undefined }
  }
  const lock = await lockDataDir(localConfig.dataDir, command)
  notice(
    `Loom: no running stack answers for ${resolve(localConfig.dataDir)}: using that data directory (LOOM_DATA_DIR) ` +
      'directly (a stack started with LOOM_MEMORY=1 is reached with the DYNAMODB_ENDPOINT its banner prints)\n',
  )
  let dynamo: EmbeddedDynamo | undefined
  const close = async () => {
    await dynamo?.close()
    await lock.release()
  }
  try {
    dynamo = await startLocalDynamo(localConfig.dynamoEngine, localConfig.dataDir)
    config.dynamoEndpoint = dynamo.endpoint
    await ensureTable(config.tableName)
    return { close }
  } catch (error) {
    await close()
    throw error
  }
}
