import { mkdir, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import dynalite from 'dynalite'

/** A running embedded DynamoDB (dynalite) and how to stop it. */
export type EmbeddedDynamo = { endpoint: string; close: () => Promise<void> }

/** The file where a running local stack publishes its embedded DynamoDB endpoint (read by the CLIs). */
export function endpointFile(dataDir: string): string {
  return join(dataDir, 'dynamodb-endpoint')
}

/** The file where a local stack records the table it serves (`LOOM_TABLE_NAME`), so the CLIs administer that one. */
export function tableNameFile(dataDir: string): string {
  return join(dataDir, 'table-name')
}

/**
 * Starts dynalite on loopback: persisted in LevelDB under `dataDir`, or in memory when `dataDir` is undefined.
 * When persisted, the endpoint is written beside the data so `npm run keys` can reach the running stack.
 */
export async function startEmbeddedDynamo(dataDir: string | undefined): Promise<EmbeddedDynamo> {
  if (dataDir !== undefined) await mkdir(dataDir, { recursive: true })
  const server = dynalite({
    ...(dataDir === undefined ? {} : { path: join(dataDir, 'dynamodb') }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const endpoint = `http://127.0.0.1:${port}`
  if (dataDir !== undefined) await writeFile(endpointFile(dataDir), endpoint)
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return { endpoint, close }
}
