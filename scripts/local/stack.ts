import { writeFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import { createAdaptorServer } from '@hono/node-server'
import { bootstrapKey } from '#shared/auth/bootstrap'
import { config, type LocalDynamoEngine, localConfig } from '#shared/config'
import { ensureTable } from '#shared/db/ensure-table'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { flushUsage } from '#shared/inference/usage-meter'
import { createLocalApp } from './app.js'
import { bannerLines, connectableUrl } from './banner.js'
import { answerClientErrors } from './client-error.js'
import { type DataDirLock, lockDataDir } from './data-dir-lock.js'
import { ENGINE_NAMES, startLocalDynamo } from './dynamo-engine.js'
import { type EmbeddedDynamo, tableNameFile } from './embedded-dynamo.js'
import { gracefulCloser } from './graceful-close.js'
import { checkModelsFile } from './models-file.js'
import { checkPricesFile } from './prices-file.js'
import { listenError, SetupError } from './setup-error.js'

/** How to start the local stack; `stackOptionsFromConfig()` reads them from the settings. */
export type StackOptions = {
  port: number
  host: string
  dataDir: string
  memory: boolean
  engine: LocalDynamoEngine
  /** A DynamoDB started by someone else (`DYNAMODB_ENDPOINT`): the stack then launches none and takes no data dir. */
  dynamoEndpoint: string | undefined
  tableName: string
  modelsFile: string | undefined
  /** `LOOM_PRICES_FILE`, checked at start like the models file. */
  pricesFile: string | undefined
  bootstrap: { key: string | undefined; userId: string; entity: string }
}

/** A serving local stack: where it listens, and how to stop it (once, however often called). */
export type RunningStack = { url: string; port: number; stop: (graceMs: number) => Promise<void> }

/** The stack's options as `npm start` reads them from the environment. */
export function stackOptionsFromConfig(): StackOptions {
  return {
    port: localConfig.port,
    host: localConfig.host,
    dataDir: localConfig.dataDir,
    memory: localConfig.memory,
    engine: localConfig.dynamoEngine,
    dynamoEndpoint: config.dynamoEndpoint,
    tableName: config.tableName ?? 'loom',
    modelsFile: config.inference.modelsFile,
    pricesFile: config.tracing.pricesFile,
    bootstrap: {
      key: localConfig.bootstrapKey,
      userId: localConfig.bootstrapUser,
      entity: localConfig.bootstrapEntity,
    },
  }
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, host, port))
    server.once('error', failed)
    server.listen(port, host, () => {
      // Later server errors are not the start's: they surface as before.
      server.off('error', failed)
      const address = server.address()
      resolve(typeof address === 'object' && address !== null ? address.port : port)
    })
  })
}

async function launchDynamo(options: StackOptions): Promise<EmbeddedDynamo> {
  try {
    return await startLocalDynamo(options.engine, options.memory ? undefined : options.dataDir)
  } catch (error) {
    // A missing Java, say, is one line to act on, not a stack trace.
    throw new SetupError((error as Error).message, { cause: error })
  }
}

/**
 * Starts the whole stack in this process: its own DynamoDB (unless `dynamoEndpoint` is given), the table, the
 * built-in model, every function's routes on one port, then the first API key (only once the port is bound, so a
 * start that cannot listen creates no key it could not show) and the banner on `print`. A failure releases what was
 * taken (the data directory, the DynamoDB) and rejects, with a `SetupError` for what one line explains.
 */
export async function startStack(options: StackOptions, print: (text: string) => void): Promise<RunningStack> {
  if (options.modelsFile !== undefined) await checkModelsFile(options.modelsFile)
  if (options.pricesFile !== undefined) await checkPricesFile(options.pricesFile)
  const launches = options.dynamoEndpoint === undefined
  // Before anything under the data directory is opened or written (the endpoint file the CLIs read included).
  const lock: DataDirLock | undefined =
    launches && !options.memory ? await lockDataDir(options.dataDir, 'npm start') : undefined
  let dynamo: EmbeddedDynamo | undefined
  let server: Server | undefined
  try {
    dynamo = launches ? await launchDynamo(options) : undefined
    config.dynamoEndpoint = dynamo?.endpoint ?? options.dynamoEndpoint
    config.tableName = options.tableName
    await ensureTable(options.tableName)
    // The CLIs reach this stack through its data directory: they administer the table it serves, not `loom`.
    if (lock !== undefined) await writeFile(tableNameFile(options.dataDir), options.tableName)
    // The built-in CPU model, so a fresh clone can serve completions with nothing else installed.
    await putModel(referenceCatalogModel())
    const app = await createLocalApp()
    server = createAdaptorServer({ fetch: app.fetch, hostname: options.host }) as Server
    answerClientErrors(server)
    const closer = gracefulCloser(server)
    const port = await listen(server, options.port, options.host)
    const boot = await bootstrapKey(options.bootstrap)
    await lock?.update({ port })
    const where = options.memory ? `in memory at ${dynamo?.endpoint}` : options.dataDir
    const storage = dynamo === undefined ? `${options.dynamoEndpoint}` : `${ENGINE_NAMES[options.engine]}, ${where}`
    const memoryEndpoint = options.memory ? dynamo?.endpoint : undefined
    const facts = { host: options.host, port, storage, tableName: options.tableName, memoryEndpoint, boot }
    print(`${bannerLines(facts).join('\n')}\n`)
    let stopped: Promise<void> | undefined
    const stop = async (graceMs: number) => {
      // No new connection, keep-alive clients told to close, and every request answered (or cut after the grace
      // period) before the store is touched: a request still being served while the store stops would answer 200
      // and lose its trace. Then answered requests' remaining writes (a completion's trace, its token charge) and the
      // usage the meter still holds (it writes once a second) reach the store before it stops.
      await closer.close(graceMs)
      await settleAfterResponse()
      await flushUsage()
      await dynamo?.close()
      await lock?.release()
      print('Loom stopped.\n')
    }
    return { url: connectableUrl(options.host, port), port, stop: (graceMs) => (stopped ??= stop(graceMs)) }
  } catch (error) {
    if (server?.listening) {
      const listening = server
      await new Promise((resolve) => {
        listening.close(resolve)
        listening.closeAllConnections()
      })
    }
    await dynamo?.close()
    await lock?.release()
    throw error
  }
}
