import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { getModel } from '#shared/db/model-repository'
import { modelsCli } from '../../scripts/local/models-cli.js'
import { runCli, spawnCli } from '../support/cli.js'

const models = (...args: string[]) => runCli(modelsCli, ...args)

describe('npm run models', () => {
  it('adds, lists and removes a model in the configured table', async () => {
    // Prepare
    const id = `org/cli-${randomUUID().slice(0, 8)}`

    // Act
    const added = await models(
      'add',
      id,
      '--base-url',
      'http://127.0.0.1:8000/v1',
      '--entities',
      'team-a,team-b',
      '--api-key-ref',
      'env:UPSTREAM_KEY',
      '--scheduling',
      'priority',
      '--no-chat-template',
      '--price-prompt',
      '0.000001',
      '--price-completion',
      '0.000002',
      '--max-model-len',
      '4096',
    )
    const stored = await getModel(id)
    const listed = await models('list', '--json')
    const removed = await models('remove', id)
    const gone = await getModel(id)

    // Assess
    expect(added.code).toBe(0)
    expect(stored).toEqual({
      id,
      backend: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyRef: 'env:UPSTREAM_KEY' },
      entities: ['team-a', 'team-b'],
      hasChatTemplate: false,
      scheduling: 'priority',
      maxModelLen: 4096,
      prices: { prompt: 0.000001, completion: 0.000002 },
    })
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((m) => m.id)).toContain(id)
    expect(removed.code).toBe(0)
    expect(gone).toBeUndefined()
  })

  it('refuses a plaintext credential and incomplete input without writing', async () => {
    // Prepare
    const id = `org/cli-${randomUUID().slice(0, 8)}`

    // Act
    const secret = await models('add', id, '--base-url', 'http://x/v1', '--entities', '*', '--api-key', 'sk-plain')
    const noEntities = await models('add', id, '--base-url', 'http://x/v1')
    const missing = await models('remove', id)

    // Assess
    expect(secret.code).toBe(2)
    expect(secret.stderr).toContain('Credentials are never stored in the catalog')
    expect(noEntities.code).toBe(2)
    expect(missing.code).toBe(2)
    expect(await getModel(id)).toBeUndefined()
  })

  it('imports a catalog file', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-models-'))
    const id = `org/file-${randomUUID().slice(0, 8)}`
    const file = join(dir, 'models.json')
    await writeFile(file, JSON.stringify([{ id, backend: { kind: 'reference' }, entities: ['*'], ownedBy: 'loom' }]))

    // Act
    const imported = await models('import', file)
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(imported.code).toBe(0)
    expect(await getModel(id)).toEqual({ id, backend: { kind: 'reference' }, entities: ['*'], ownedBy: 'loom' })
  })

  it('stores per-project limits given as flags and refuses a limit that is not a positive integer', async () => {
    // Prepare
    const id = `org/limits-${randomUUID().slice(0, 8)}`
    const bad = `org/bad-${randomUUID().slice(0, 8)}`

    // Act
    const added = await models(
      'add',
      id,
      '--backend',
      'reference',
      '--entities',
      '*',
      '--rpm',
      '60',
      '--tpm',
      '10000',
      '--concurrency',
      '4',
    )
    const listed = await models('list')
    const zero = await models('add', bad, '--backend', 'reference', '--entities', '*', '--concurrency', '0')
    const fraction = await models('add', bad, '--backend', 'reference', '--entities', '*', '--rpm', '1.5')

    // Assess
    expect(added.code).toBe(0)
    expect(await getModel(id)).toEqual({
      id,
      backend: { kind: 'reference' },
      entities: ['*'],
      rpm: 60,
      tpm: 10000,
      concurrency: 4,
    })
    expect(listed.stdout).toContain(`${id}  reference built-in engine  entities=*  rpm=60  tpm=10000  concurrency=4`)
    expect(zero.code).toBe(2)
    expect(zero.stderr).toContain('--concurrency must be a positive integer')
    expect(fraction.code).toBe(2)
    expect(await getModel(bad)).toBeUndefined()
  })

  it('runs as a script: adds a model to the table it is pointed at and exits with status 0', async () => {
    // Prepare
    const id = `org/script-${randomUUID().slice(0, 8)}`

    // Act
    const added = await spawnCli('scripts/models.ts', 'add', id, '--backend', 'reference', '--entities', '*')

    // Assess
    expect(added.code).toBe(0)
    expect(added.stdout).toContain(`Added ${id}  reference built-in engine  entities=*`)
    expect(await getModel(id)).toEqual({ id, backend: { kind: 'reference' }, entities: ['*'] })
  }, 60_000)
})
