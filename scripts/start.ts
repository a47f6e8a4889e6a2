import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { bootstrapKey } from '#shared/auth/bootstrap'
import { config, localConfig } from '#shared/config'
import { ensureTable } from '#shared/db/ensure-table'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { flushUsage } from '#shared/inference/usage-meter'
import { createLocalApp } from './local/app.js'
import { ENGINE_NAMES, startLocalDynamo } from './local/dynamo-engine.js'
import type { EmbeddedDynamo } from './local/embedded-dynamo.js'
import { gracefulCloser } from './local/graceful-close.js'

// `npm start`: the whole stack in one process — its own DynamoDB (dynalite embedded, or DynamoDB Local with
// LOOM_DYNAMODB=local; none when DYNAMODB_ENDPOINT is set), tables created from the shared definition, a bootstrap
// key, and every function's routes on one port.
let dynamo: EmbeddedDynamo | undefined
if (config.dynamoEndpoint === undefined) {
  dynamo = await startLocalDynamo(localConfig.dynamoEngine, localConfig.memory ? undefined : localConfig.dataDir).catch(
    (error: Error) => {
      // A missing Java, say, is one line to act on, not a stack trace.
      process.stderr.write(`${error.message}\n`)
      process.exit(1)
    },
  )
  config.dynamoEndpoint = dynamo.endpoint
}
config.tableName ??= 'loom'
await ensureTable(config.tableName)
// The built-in CPU model, so a fresh clone can serve completions with nothing else installed.
await putModel(referenceCatalogModel())

const boot = await bootstrapKey({
  key: localConfig.bootstrapKey,
  userId: localConfig.bootstrapUser,
  entity: localConfig.bootstrapEntity,
})

const app = await createLocalApp()
const server = serve({ fetch: app.fetch, port: localConfig.port, hostname: localConfig.host }, (info) => {
  const base = `http://${localConfig.host}:${info.port}`
  const where = localConfig.memory ? 'in memory' : localConfig.dataDir
  const storage = dynamo === undefined ? config.dynamoEndpoint : `${ENGINE_NAMES[localConfig.dynamoEngine]}, ${where}`
  const lines = [
    'Loom is running.',
    `  Console:          ${base}/console    (sign in with an API key)`,
    `  Tracing (Weave):  ${base}            WF_TRACE_SERVER_URL=${base}`,
    `  Inference:        ${base}/v1         OPENAI_BASE_URL=${base}/v1   (model loom/reference-1)`,
    `  OpenTelemetry:    ${base}/otel/v1/traces   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${base}/otel/v1/traces (+ project_id header)`,
    `  Health:           ${base}/health`,
    `  OpenAPI:          ${base}/openapi.json`,
    `  DynamoDB:         ${storage} (table ${config.tableName})`,
  ]
  if (boot.kind === 'generated') {
    lines.push(
      '',
      `  First start: created an API key for user '${boot.record.userId}' in entity '${boot.record.entity}'.`,
      `  It is shown only this once: ${boot.key}`,
    )
  } else if (boot.kind === 'configured') {
    lines.push(`  Bootstrap key registered for user '${boot.record.userId}' in entity '${boot.record.entity}'.`)
  }
  process.stdout.write(`${lines.join('\n')}\n`)
})

const closer = gracefulCloser(server as Server)
// How long requests in progress (a long stream) may take to end after a stop signal before their connections are cut.
const SHUTDOWN_GRACE_MS = 10_000
let stopping = false

async function shutdown() {
  // Once, however many signals arrive (a terminal's Ctrl-C reaches every process of its group; supervisors repeat).
  if (stopping) return
  stopping = true
  // No new connection, keep-alive clients told to close, and every request answered (or cut after the grace period)
  // before the store is touched: a request still being served while the store stops would answer 200 and lose its
  // trace. Then answered requests' remaining writes (a completion's trace, its token charge) and the usage the meter
  // still holds (it writes once a second) reach the store before it stops.
  await closer.close(SHUTDOWN_GRACE_MS)
  await settleAfterResponse()
  await flushUsage()
  await dynamo?.close()
  process.exit(0)
}
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)
