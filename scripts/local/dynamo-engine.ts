import type { LocalDynamoEngine } from '#shared/config'
import { startDynamoDbLocal } from './dynamodb-local.js'
import { type EmbeddedDynamo, startEmbeddedDynamo } from './embedded-dynamo.js'

/** Human-readable engine names for the start banner. */
export const ENGINE_NAMES: Record<LocalDynamoEngine, string> = { dynalite: 'dynalite', local: 'DynamoDB Local' }

/**
 * Starts the local stack's own DynamoDB (`LOOM_DYNAMODB`): dynalite in this process, or DynamoDB Local as a Java
 * child process; persisted under `dataDir`, or in memory when it is undefined.
 */
export function startLocalDynamo(engine: LocalDynamoEngine, dataDir: string | undefined): Promise<EmbeddedDynamo> {
  return engine === 'local' ? startDynamoDbLocal({ dataDir }) : startEmbeddedDynamo(dataDir)
}
