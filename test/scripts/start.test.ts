import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startLocalStack } from '../support/local-stack.js'

const dirs: string[] = []
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'loom-start-'))
  dirs.push(dir)
  return dir
}

describe('npm start', () => {
  it('serves /health, prints a first key once and keeps data across restarts', async () => {
    // Prepare
    const dir = await tempDir()
    const env = { LOOM_DATA_DIR: join(dir, 'data') }

    // Act
    const first = await startLocalStack(env, dir)
    const health = await fetch(`${first.url}/health`)
    const openapi = (await (await fetch(`${first.url}/openapi.json`)).json()) as { openapi: string; paths: object }
    await first.stop()
    const second = await startLocalStack(env, dir)
    await second.stop()

    // Assess
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(openapi.openapi).toBe('3.1.0')
    expect(Object.keys(openapi.paths)).toContain('/health')
    expect(first.output()).toMatch(/shown only this once: loom_[\w-]{43}/)
    expect(second.output()).not.toMatch(/shown only this once/)
    expect(await readdir(join(dir, 'data'))).toContain('dynamodb')
  }, 120_000)

  it('writes nothing to disk with LOOM_MEMORY=1', async () => {
    const dir = await tempDir()
    const stack = await startLocalStack({ LOOM_MEMORY: '1', LOOM_DATA_DIR: join(dir, 'data') }, dir)
    const health = await fetch(`${stack.url}/health`)
    await stack.stop()
    expect(health.status).toBe(200)
    expect(await readdir(dir)).toEqual([])
  }, 120_000)
})
