import { spawn } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { config } from '#shared/config'
import { endpointFile } from '../../scripts/local/embedded-dynamo.js'
import { keysCli } from '../../scripts/local/keys-cli.js'
import { runCli } from '../support/cli.js'
import { type LocalStack, startArgs, startLocalStack } from '../support/local-stack.js'
import { tempDirs } from '../support/temp-dirs.js'

const tempDir = tempDirs('loom-start-')

/** Runs the start script in a child process for a start expected to fail, and resolves once it exits. */
async function startToFailure(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...process.env, PORT: '0', POWERTOOLS_LOG_LEVEL: 'SILENT', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const printed = { stdout: '', stderr: '' }
  child.stdout.on('data', (chunk) => {
    printed.stdout += String(chunk)
  })
  child.stderr.on('data', (chunk) => {
    printed.stderr += String(chunk)
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>((resolve) => child.once('close', (status) => resolve(status)))
  clearTimeout(timer)
  return { code, ...printed }
}

describe('npm start', () => {
  it('serves /health, prints a first key once and keeps data across restarts, usage metered just before included', async () => {
    // Prepare
    const dir = await tempDir()
    const env = { LOOM_DATA_DIR: join(dir, 'data') }

    // Act
    const first = await startLocalStack(env, dir)
    const published = await readFile(endpointFile(join(dir, 'data')), 'utf8')
    // A second start on the same data directory, while the first serves.
    const clash = await startToFailure(env)
    const publishedAfterClash = await readFile(endpointFile(join(dir, 'data')), 'utf8')
    const health = await fetch(`${first.url}/health`)
    const openapi = (await (await fetch(`${first.url}/openapi.json`)).json()) as { openapi: string; paths: object }
    const key = /shown only this once: (loom_[\w-]{43})/.exec(first.output())?.[1] ?? ''
    const project = 'local/restarts'
    // Stopped right after the completion, within the meter's one-second flush interval.
    await new OpenAI({ apiKey: key, baseURL: `${first.url}/v1`, project, maxRetries: 0 }).chat.completions.create({
      model: 'loom/reference-1',
      messages: [{ role: 'user', content: 'Hi' }],
      max_completion_tokens: 4,
    })
    await first.stop()
    const second = await startLocalStack(env, dir)
    const usage = await fetch(`${second.url}/v1/usage?project=${project}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    const report = (await usage.json()) as { data: { requests: number; completion_tokens: number }[] }
    await second.stop()

    // Assess
    expect(clash.code).toBe(1)
    const port = new URL(first.url).port
    expect(clash.stderr).toMatch(
      new RegExp(
        `^Loom: the data directory \\S+ is in use by another Loom \\(npm start, pid \\d+, port ${port}\\): stop it`,
        'm',
      ),
    )
    expect(clash.stderr).not.toMatch(/^\s+at /m)
    expect(publishedAfterClash).toBe(published)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(first.output()).toContain('Press Ctrl-C to stop.')
    expect(first.output()).toMatch(/Loom stopped\.\n$/)
    expect(openapi.openapi).toBe('3.1.0')
    expect(Object.keys(openapi.paths)).toContain('/health')
    expect(first.output()).toMatch(/shown only this once: loom_[\w-]{43}/)
    expect(second.output()).not.toMatch(/shown only this once/)
    expect(await readdir(join(dir, 'data'))).toContain('dynamodb')
    expect(usage.status).toBe(200)
    expect(report.data).toEqual([expect.objectContaining({ requests: 1, completion_tokens: expect.any(Number) })])
    expect(report.data[0]?.completion_tokens).toBeGreaterThan(0)
  }, 120_000)
})

// One in-memory stack serves the four tests below (each start is a tsx process loading every function): the
// bootstrap key's entity is `team`, and the data directory it is given must stay empty. The tests run in order; the
// last one stops the stack before it looks at the disk.
describe('npm start refusing to start', () => {
  it('stops when npm is stopped with SIGTERM: the shell npm runs it in dies without passing the signal on', async () => {
    // Prepare: the script under \`sh -c\` as npm runs it (in the background here, so the shell can say its pid), in
    // memory, with npm's lifecycle variable
    const command = [process.execPath, ...startArgs(process.cwd())].map((a) => `'${a}'`).join(' ')
    const shell = spawn('sh', ['-c', `${command} & echo "pid $!"; wait`], {
      env: {
        ...process.env,
        PORT: '0',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
        LOOM_MEMORY: '1',
        npm_lifecycle_event: 'start',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    shell.stdout.on('data', (chunk) => {
      out += String(chunk)
    })
    // Every writer of the pipe gone: the shell and the server it started.
    const closed = new Promise<void>((resolve) => shell.stdout.once('close', () => resolve()))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`start timed out:\n${out}`)), 60_000)
      shell.stdout.on('data', () => {
        if (/Health:\s+http:\/\/\S+\/health/.test(out)) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    const server = Number(/^pid (\d+)$/m.exec(out)?.[1])

    // Act: npm passes SIGTERM to its shell only
    shell.kill('SIGTERM')
    const stopped = await Promise.race([
      closed.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 20_000)),
    ])
    if (!stopped) process.kill(server, 'SIGKILL')

    // Assess
    expect(server).toBeGreaterThan(0)
    expect(stopped, out).toBe(true)
    expect(out).toMatch(/Loom stopped\.\n$/)
  })

  it('explains a rejected setting in one line, without a stack trace, and exits with status 1', async () => {
    // Act
    const failed = await startToFailure({ LOOM_DYNAMODB: 'foo', LOOM_MEMORY: '1' })

    // Assess
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain(
      `Loom: LOOM_DYNAMODB environment variable must be 'dynalite' or 'local', got "foo"\n`,
    )
    expect(failed.stderr).not.toMatch(/^\s+at /m)
    expect(failed.stdout).toBe('')
  })
  it('explains a LOOM_DATA_DIR under a file in one line, without a stack trace, and exits with status 1 (QA)', async () => {
    // Prepare
    const dir = await tempDir()
    const file = join(dir, 'afile')
    await writeFile(file, '')

    // Act
    const failed = await startToFailure({ LOOM_DATA_DIR: join(file, 'data') })

    // Assess
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain(
      `Loom: the data directory ${join(file, 'data')} cannot be used: a part of its path is a file, not a directory (ENOTDIR)`,
    )
    expect(failed.stderr).not.toMatch(/^\s+at /m)
    expect(failed.stdout).toBe('')
  })
})

describe('npm start with LOOM_MEMORY=1', () => {
  let dir: string
  let stack: LocalStack

  beforeAll(async () => {
    dir = await tempDir()
    stack = await startLocalStack(
      { LOOM_MEMORY: '1', LOOM_DATA_DIR: join(dir, 'data'), LOOM_BOOTSTRAP_KEY: 'k', LOOM_BOOTSTRAP_ENTITY: 'team' },
      dir,
    )
  }, 120_000)
  afterAll(() => stack?.stop())

  it('accepts LOOM_BOOTSTRAP_KEY as Bearer on /v1 and as Basic api:<key> on tracing, 401 otherwise, 403 abroad', async () => {
    // Prepare
    const basic = (key: string) => `Basic ${Buffer.from(`api:${key}`).toString('base64')}`
    const stats = (authorization: string, project: string) =>
      fetch(`${stack.url}/calls/query_stats`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: project }),
      })

    // Act
    const models = await fetch(`${stack.url}/v1/models`, { headers: { authorization: 'Bearer k' } })
    const modelsWrongKey = await fetch(`${stack.url}/v1/models`, { headers: { authorization: 'Bearer nope' } })
    const modelsNoKey = await fetch(`${stack.url}/v1/models`)
    const tracing = await stats(basic('k'), 'team/demo')
    const tracingWrongKey = await stats(basic('nope'), 'team/demo')
    const tracingForeign = await stats(basic('k'), 'someone-else/demo')

    // Assess
    expect(models.status).toBe(200)
    expect(((await models.json()) as { object: string }).object).toBe('list')
    expect(modelsWrongKey.status).toBe(401)
    expect(((await modelsWrongKey.json()) as { error: { code: number } }).error.code).toBe(401)
    expect(modelsNoKey.status).toBe(401)
    expect(tracing.status).toBe(200)
    expect(await tracing.json()).toMatchObject({ count: 0 })
    expect(tracingWrongKey.status).toBe(401)
    expect(await tracingWrongKey.json()).toEqual({ reason: 'Authentication failed' })
    expect(tracingForeign.status).toBe(403)
    expect(await tracingForeign.json()).toEqual({ reason: "You do not have access to entity 'someone-else'" })
  })

  it('serves the built-in reference model to the openai SDK, structured output included', async () => {
    // Prepare
    const client = new OpenAI({ apiKey: 'k', baseURL: `${stack.url}/v1`, maxRetries: 0 })
    const schema = {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 12 }, visits: { type: 'integer', minimum: 0, maximum: 9 } },
      required: ['city', 'visits'],
      additionalProperties: false,
    }

    // Act
    const models = await client.models.list()
    const completion = await client.chat.completions.create({
      model: 'loom/reference-1',
      messages: [{ role: 'user', content: 'Where did you go?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'trip', schema } },
      max_completion_tokens: 64,
      seed: 7,
    })
    const stream = await client.chat.completions.create({
      model: 'loom/reference-1',
      messages: [{ role: 'user', content: 'Say hello.' }],
      max_completion_tokens: 16,
      stream: true,
      stream_options: { include_usage: true },
    })
    let streamed = ''
    let usage: { completion_tokens: number } | undefined
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta.content ?? ''
      if (chunk.usage) usage = chunk.usage
    }

    // Assess
    expect(models.data.map((m) => m.id)).toContain('loom/reference-1')
    const parsed = JSON.parse(completion.choices[0]?.message.content ?? '') as { city: string; visits: number }
    expect(typeof parsed.city).toBe('string')
    expect(parsed.city.length).toBeLessThanOrEqual(12)
    expect(Number.isInteger(parsed.visits) && parsed.visits >= 0 && parsed.visits <= 9).toBe(true)
    expect(Object.keys(parsed).sort()).toEqual(['city', 'visits'])
    expect(streamed.length).toBeGreaterThan(0)
    expect(usage?.completion_tokens).toBeGreaterThan(0)
  }, 60_000)

  it('prints the DYNAMODB_ENDPOINT that points the keys CLI at its in-memory table, and a key made there works', async () => {
    // Prepare: the CLI reads DYNAMODB_ENDPOINT into `config`, as here.
    const endpoint = /DYNAMODB_ENDPOINT=(http:\/\/127\.0\.0\.1:\d+) npm run keys -- /.exec(stack.output())?.[1]
    const before = { endpoint: config.dynamoEndpoint, table: config.tableName }
    // Without the line, the discard port: the CLI then fails rather than open a data directory in the working folder.
    config.dynamoEndpoint = endpoint ?? 'http://127.0.0.1:9'
    config.tableName = undefined

    // Act
    const created = await runCli(keysCli, 'create', '--user', 'mem', '--entity', 'memco')
    config.dynamoEndpoint = before.endpoint
    config.tableName = before.table
    const key = /API key \(shown once, store it now\): (\S+)/.exec(created.stdout)?.[1] ?? ''
    const models = await fetch(`${stack.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })

    // Assess
    expect(endpoint).toBeDefined()
    expect(created.code).toBe(0)
    expect(created.stderr).toBe('')
    expect(models.status).toBe(200)
  })

  it('writes nothing to disk, even after serving requests and stopping', async () => {
    // Act
    const health = await fetch(`${stack.url}/health`)
    await stack.stop()

    // Assess
    expect(health.status).toBe(200)
    expect(await readdir(dir)).toEqual([])
  })
})
