import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { createApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { ensureTable } from '#shared/db/ensure-table'
import { putModel } from '#shared/db/model-repository'

// Loom's chat-completions function served as the local stack serves it. Prints `{port, key}` on stdout. Arguments: the
// upstream base URL, then optionally a DynamoDB endpoint (keys, catalog, usage counters); without one, a dynalite
// runs inside this process.
const [upstream, dynamoEndpoint] = process.argv.slice(2)
if (upstream === undefined) throw new Error('usage: loom-server.ts <upstream base URL> [DynamoDB endpoint]')

if (dynamoEndpoint === undefined) {
  const { default: dynalite } = await import('dynalite')
  const store = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', () => resolve()))
  config.dynamoEndpoint = `http://127.0.0.1:${(store.address() as AddressInfo).port}`
} else {
  config.dynamoEndpoint = dynamoEndpoint
}
config.tableName = 'loom-bench'
await ensureTable(config.tableName)
const { key } = await createApiKey({ userId: 'bench', entity: 'bench' })
await putModel({ id: 'bench/fast', backend: { kind: 'openai-compatible', baseUrl: upstream }, entities: ['bench'] })

// Imported after config points at the embedded store.
const { app } = await import('#functions/inference/create-chat-completion/handler')
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.stdout.write(`${JSON.stringify({ port: info.port, key })}\n`)
})

// Exit normally on a signal so `--cpu-prof` runs can write their profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0))
