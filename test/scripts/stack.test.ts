import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { ListTablesCommand } from '@aws-sdk/client-dynamodb'
import { afterEach, describe, expect, it } from 'vitest'
import { config, localConfig } from '#shared/config'
import { listApiKeys } from '#shared/db/api-key-repository'
import { rawDb } from '#shared/db/client'
import { lockDataDir, lockFile } from '../../scripts/local/data-dir-lock.js'
import { endpointFile } from '../../scripts/local/embedded-dynamo.js'
import { keysCli } from '../../scripts/local/keys-cli.js'
import { SetupError } from '../../scripts/local/setup-error.js'
import { type StackOptions, startStack } from '../../scripts/local/stack.js'
import { tempDirs } from '../support/temp-dirs.js'

// The file's table (test/setup.ts), given back after each test: a stack launching its own DynamoDB re-points `config`.
const fileTable = { endpoint: config.dynamoEndpoint, table: config.tableName }
afterEach(() => {
  config.dynamoEndpoint = fileTable.endpoint
  config.tableName = fileTable.table
})

const tempDir = tempDirs('loom-stack-')

/** Options for a stack on a free port; on the file's table unless `dynamoEndpoint` is set to undefined. */
function options(overrides: Partial<StackOptions> = {}): StackOptions {
  return {
    port: 0,
    host: '127.0.0.1',
    dataDir: join(tmpdir(), 'loom-stack-unused'),
    memory: false,
    engine: 'dynalite',
    dynamoEndpoint: fileTable.endpoint,
    tableName: fileTable.table ?? 'loom',
    modelsFile: undefined,
    pricesFile: undefined,
    bootstrap: { key: undefined, userId: `u-${randomUUID().slice(0, 8)}`, entity: 'local' },
    ...overrides,
  }
}

async function listTableNames(): Promise<string[]> {
  return (await rawDb().send(new ListTablesCommand({}))).TableNames ?? []
}

function printer() {
  let text = ''
  const print = (piece: string) => {
    text += piece
  }
  return { print, text: () => text }
}

async function listening(): Promise<{ port: number; server: Server }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const address = server.address()
  return { port: typeof address === 'object' && address !== null ? address.port : 0, server }
}

// A pid no process has any more: a child that already exited.
async function deadPid(): Promise<number> {
  const child = execFile(process.execPath, ['-e', ''])
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid ?? 0
}

describe('starting the local stack', () => {
  it('creates no first key when the port is in use, and shows it on the next start that listens', async () => {
    // Prepare
    const busy = await listening()
    const opts = options({ port: busy.port })
    const failedOut = printer()
    const out = printer()

    // Act
    const failed = await startStack(opts, failedOut.print).catch((error: unknown) => error)
    const keysAfterFailure = await listApiKeys(opts.bootstrap.userId)
    await new Promise((resolve) => busy.server.close(resolve))
    const stack = await startStack({ ...opts, port: 0 }, out.print)
    await stack.stop(1_000)
    const keys = await listApiKeys(opts.bootstrap.userId)

    // Assess
    expect(failed).toBeInstanceOf(SetupError)
    expect((failed as Error).message).toBe(
      `port ${busy.port} on 127.0.0.1 is in use (set PORT to another port, or stop what listens there)`,
    )
    expect(failedOut.text()).toBe('')
    expect(keysAfterFailure).toEqual([])
    expect(out.text()).toMatch(/It is shown only this once: loom_/)
    expect(keys).toHaveLength(1)
  })

  it('creates no first-start key on a restart without the LOOM_BOOTSTRAP_KEY the first start registered (QA)', async () => {
    // Prepare
    const dataDir = join(await tempDir(), 'data')
    const userId = `u-${randomUUID().slice(0, 8)}`
    const first = printer()
    const second = printer()
    const start = (key: string | undefined, print: (text: string) => void) =>
      startStack(options({ dynamoEndpoint: undefined, dataDir, bootstrap: { key, userId, entity: 'local' } }), print)

    // Act
    await (await start('boot-key-123456', first.print)).stop(1_000)
    const restarted = await start(undefined, second.print)
    const keys = await listApiKeys(userId)
    await restarted.stop(1_000)

    // Assess
    expect(second.text()).not.toContain('shown only this once')
    expect(keys.map((key) => key.name)).toEqual(['bootstrap'])
  })

  it('prints connectable URLs for a wildcard HOST, how to stop, and a line once stopped', async () => {
    // Prepare
    const out = printer()

    // Act
    const stack = await startStack(options({ host: '0.0.0.0' }), out.print)
    const health = await fetch(`${stack.url}/health`)
    const banner = out.text()
    await stack.stop(1_000)

    // Assess
    expect(health.status).toBe(200)
    expect(banner).toContain(`Health:           http://127.0.0.1:${stack.port}/health`)
    expect(banner).not.toContain('http://0.0.0.0')
    expect(banner).toContain('Listening on every interface (HOST=0.0.0.0)')
    expect(banner).toMatch(/Press Ctrl-C to stop\.\n$/)
    expect(out.text()).toMatch(/Loom stopped\.\n$/)
  })

  it('refuses a data directory a live Loom holds, naming it, and touches nothing in it', async () => {
    // Prepare: this process holds the directory, as a running `npm start` would.
    const dataDir = await tempDir()
    const holder = await lockDataDir(dataDir, 'npm start')
    await holder.update({ port: 8931 })
    await writeFile(endpointFile(dataDir), 'http://127.0.0.1:40000')

    // Act
    const failed = await startStack(options({ dynamoEndpoint: undefined, dataDir }), () => undefined).catch(
      (error: unknown) => error,
    )
    const entries = await readdir(dataDir)
    const published = await readFile(endpointFile(dataDir), 'utf8')
    await holder.release()

    // Assess
    expect(failed).toBeInstanceOf(SetupError)
    expect((failed as Error).message).toBe(
      `the data directory ${dataDir} is in use by another Loom (npm start, pid ${process.pid}, port 8931): ` +
        'stop it, or set LOOM_DATA_DIR to another directory',
    )
    expect(entries.sort()).toEqual(['dynamodb-endpoint', 'loom.lock'])
    expect(published).toBe('http://127.0.0.1:40000')
  })

  it('takes over a data directory whose lock and endpoint a crashed Loom left, and frees it when stopped', async () => {
    // Prepare
    const dataDir = await tempDir()
    const crashed = await deadPid()
    await mkdir(dataDir, { recursive: true })
    await writeFile(lockFile(dataDir), JSON.stringify({ pid: crashed, command: 'npm start', port: 8931 }))
    await writeFile(endpointFile(dataDir), 'http://127.0.0.1:1')

    // Act
    const stack = await startStack(options({ dynamoEndpoint: undefined, dataDir }), () => undefined)
    const lock = JSON.parse(await readFile(lockFile(dataDir), 'utf8')) as unknown
    const published = await readFile(endpointFile(dataDir), 'utf8')
    const health = await fetch(`${stack.url}/health`)
    await stack.stop(1_000)
    const entries = await readdir(dataDir)

    // Assess
    expect(health.status).toBe(200)
    expect(lock).toEqual({ pid: process.pid, command: 'npm start', port: stack.port })
    expect(published).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(published).not.toBe('http://127.0.0.1:1')
    expect(entries).not.toContain('loom.lock')
  })

  it('lets the keys CLI administer the table a stack with its own LOOM_TABLE_NAME serves, not `loom` (QA)', async () => {
    // Prepare: a stack on its own data directory and table; the CLI then given only that data directory.
    const dataDir = await tempDir()
    const tableName = `qa-${randomUUID().slice(0, 8)}`
    const stack = await startStack(options({ dynamoEndpoint: undefined, dataDir, tableName }), () => undefined)
    const served = { endpoint: config.dynamoEndpoint, table: config.tableName }
    const before = localConfig.dataDir
    Object.assign(config, { dynamoEndpoint: undefined, tableName: undefined })
    localConfig.dataDir = dataDir
    const out = printer()
    const userId = `u-${randomUUID().slice(0, 8)}`

    // Act
    const code = await keysCli(['create', '--user', userId, '--entity', 'local'], { out: out.print, err: out.print })
    localConfig.dataDir = before
    Object.assign(config, served)
    const stored = await listApiKeys(userId)
    const tables = await listTableNames()
    await stack.stop(1_000)

    // Assess
    expect(code, out.text()).toBe(0)
    expect(stored).toHaveLength(1)
    expect(tables).toEqual([tableName])
  })

  it('answers what Node cannot parse (headers past 16 KiB, malformed HTTP) with a JSON body every family reads (QA)', async () => {
    // Prepare
    const stack = await startStack(options(), () => undefined)
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(stack.port, '127.0.0.1', () => socket.end(request))
        let text = ''
        socket.on('data', (piece) => {
          text += piece
        })
        socket.on('end', () => resolve(text))
        socket.on('error', reject)
      })

    // Act
    const big = await raw(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    const malformed = await raw('NOT HTTP AT ALL\r\n\r\n')
    await stack.stop(1_000)

    // Assess
    for (const [answer, status] of [
      [big, 431],
      [malformed, 400],
    ] as const) {
      const [head = '', body = ''] = answer.split('\r\n\r\n')
      expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `))
      expect(head).toContain('Content-Type: application/json')
      const json = JSON.parse(body) as { error: { message: string; code: number }; reason: string; detail: string }
      expect(json.error.code).toBe(status)
      expect(json.reason).toBe(json.error.message)
      expect(json.detail).toBe(json.error.message)
    }
  })

  it('refuses an unusable LOOM_MODELS_FILE before taking anything, naming the file and its first problem', async () => {
    // Prepare
    const dir = await tempDir()
    const dataDir = join(dir, 'data')
    const notJson = join(dir, 'broken.json')
    const badModel = join(dir, 'models.json')
    // A key pasted unquoted where the reference belongs: Node's JSON.parse message would quote it.
    await writeFile(notJson, '[{"id": "org/m",\n  "apiKeyRef": sk-live-0123456789abcdef}]')
    await writeFile(badModel, JSON.stringify([{ id: 'org/m', backend: { kind: 'openai-compatible' }, entities: [] }]))
    const twice = join(dir, 'twice.json')
    const reference = { id: 'org/r', backend: { kind: 'reference' }, entities: ['*'] }
    await writeFile(twice, JSON.stringify([reference, reference]))
    const start = (modelsFile: string) =>
      startStack(options({ dynamoEndpoint: undefined, dataDir, modelsFile }), () => undefined).then(
        () => new Error('started'),
        (error: unknown) => error as Error,
      )

    // Act
    const missing = await start(join(dir, 'none.json'))
    const syntax = await start(notJson)
    const invalid = await start(badModel)
    const repeated = await start(twice)
    const entries = await readdir(dir)

    // Assess
    expect(missing).toBeInstanceOf(SetupError)
    expect(missing.message).toBe(`LOOM_MODELS_FILE ${join(dir, 'none.json')} cannot be read (ENOENT)`)
    expect(syntax).toBeInstanceOf(SetupError)
    expect(syntax.message).toBe(`LOOM_MODELS_FILE ${notJson} is not valid JSON (line 2, column 16)`)
    expect(inspect(syntax, { depth: 12 })).not.toContain('sk-live')
    expect(invalid.message).toMatch(
      new RegExp(`^LOOM_MODELS_FILE ${badModel}: invalid model at 0\\.backend\\.baseUrl: .+ \\(expected one model`),
    )
    // A file of valid models, one id twice: the problem alone, not the format's hint
    expect(repeated.message).toBe(`LOOM_MODELS_FILE ${twice}: model id \`org/r\` appears more than once (at 0 and 1)`)
    expect(entries.sort()).toEqual(['broken.json', 'models.json', 'twice.json'])
  })

  it('refuses a LOOM_MODELS_FILE holding a plaintext credential, naming the field and never the value', async () => {
    // Prepare
    const dir = await tempDir()
    const file = join(dir, 'models.json')
    const secret = 'sk-live-plaintext-file'
    const backend = { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyRef: secret }
    await writeFile(file, JSON.stringify([{ id: 'org/m', backend, entities: ['*'] }]))

    // Act
    const failed = await startStack(
      options({ dynamoEndpoint: undefined, dataDir: join(dir, 'data'), modelsFile: file }),
      () => undefined,
    ).then(
      () => new Error('started'),
      (error: unknown) => error as Error,
    )

    // Assess
    expect(failed).toBeInstanceOf(SetupError)
    expect(failed.message).toBe(
      `LOOM_MODELS_FILE ${file}: invalid model at 0.backend.apiKeyRef: must be env:NAME or secret:<id>; the catalog never stores a credential itself (expected one model object or an array of them, as \`npm run models -- list --json\` prints)`,
    )
    expect(failed.message).not.toContain(secret)
    expect(await readdir(dir)).toEqual(['models.json'])
  })

  it('refuses an unusable LOOM_PRICES_FILE before taking anything, naming the file and its first problem (QA)', async () => {
    // Prepare
    const dir = await tempDir()
    const dataDir = join(dir, 'data')
    const notJson = join(dir, 'broken.json')
    const badRow = join(dir, 'prices.json')
    // A key pasted unquoted into a row: Node's JSON.parse message would quote it.
    await writeFile(
      notJson,
      '{"effective_date": "2024-01-01 00:00:00",\n "rows": [["m", "p", sk-live-0123456789abcdef]]}',
    )
    await writeFile(badRow, JSON.stringify({ effective_date: '2024-01-01 00:00:00', rows: [['m', 'p', 'free', 0]] }))
    const start = (pricesFile: string) =>
      startStack(options({ dynamoEndpoint: undefined, dataDir, pricesFile }), () => undefined).then(
        () => new Error('started'),
        (error: unknown) => error as Error,
      )

    // Act
    const missing = await start(join(dir, 'none.json'))
    const syntax = await start(notJson)
    const invalid = await start(badRow)
    const entries = await readdir(dir)

    // Assess
    expect(missing).toBeInstanceOf(SetupError)
    expect(missing.message).toBe(`LOOM_PRICES_FILE ${join(dir, 'none.json')} cannot be read (ENOENT)`)
    expect(syntax).toBeInstanceOf(SetupError)
    expect(syntax.message).toBe(`LOOM_PRICES_FILE ${notJson} is not valid JSON (line 2, column 22)`)
    expect(inspect(syntax, { depth: 12 })).not.toContain('sk-live')
    expect(invalid).toBeInstanceOf(SetupError)
    expect(invalid.message).toBe(`LOOM_PRICES_FILE ${badRow}: bad row 0: ["m","p","free",0]`)
    expect(entries.sort()).toEqual(['broken.json', 'prices.json'])
  })
})
