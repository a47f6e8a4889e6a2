import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { config } from '#shared/config'
import { putModel } from '#shared/db/model-repository'
import { allModels, clearCatalogCache, modelsFor, parseCatalogFile, resolveModel } from '#shared/inference/catalog'
import { logger } from '#shared/logger'
import { putRawModel } from '../../support/models.js'

afterEach(() => {
  config.inference.modelsFile = undefined
  clearCatalogCache()
})

describe('model catalog', () => {
  it('loads the config file at start, with table entries overriding file entries of the same id', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-catalog-'))
    const fileOnly = `org/file-${randomUUID().slice(0, 8)}`
    const both = `org/both-${randomUUID().slice(0, 8)}`
    const file = join(dir, 'models.json')
    await writeFile(
      file,
      JSON.stringify([
        { id: fileOnly, backend: { kind: 'openai-compatible', baseUrl: 'http://a/v1' }, entities: ['*'] },
        { id: both, backend: { kind: 'openai-compatible', baseUrl: 'http://file/v1' }, entities: ['*'] },
      ]),
    )
    await putModel({ id: both, backend: { kind: 'openai-compatible', baseUrl: 'http://table/v1' }, entities: ['*'] })
    config.inference.modelsFile = file
    clearCatalogCache()

    // Act
    const models = await allModels()
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(models.map((m) => m.id)).toEqual(expect.arrayContaining([fileOnly, both]))
    expect(models.find((m) => m.id === both)?.backend).toEqual({
      kind: 'openai-compatible',
      baseUrl: 'http://table/v1',
    })
  })

  it('fails fast on an invalid catalog file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loom-catalog-'))
    const file = join(dir, 'models.json')
    await writeFile(file, JSON.stringify([{ id: 'x', backend: { kind: 'gpu-magic' }, entities: [] }]))
    config.inference.modelsFile = file
    clearCatalogCache()
    await expect(allModels()).rejects.toMatchObject({
      statusCode: 503,
      message: expect.stringMatching(
        /^The model catalog is misconfigured: LOOM_MODELS_FILE: invalid model at 0\.backend/,
      ),
      headers: { 'x-should-retry': 'false' },
    })
    await rm(dir, { recursive: true, force: true })
  })

  it('refuses a catalog file naming one model id twice, with a 503 naming the id', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-catalog-'))
    const file = join(dir, 'models.json')
    const entry = { id: 'org/twice', backend: { kind: 'reference' }, entities: ['*'] }
    await writeFile(file, JSON.stringify([entry, { ...entry, ownedBy: 'last' }]))
    config.inference.modelsFile = file
    clearCatalogCache()

    // Act
    const failure = await allModels().then(
      () => new Error('loaded'),
      (error: unknown) => error as Error,
    )
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(failure).toMatchObject({
      statusCode: 503,
      message:
        'The model catalog is misconfigured: LOOM_MODELS_FILE: model id `org/twice` appears more than once (at 0 and 1)',
    })
  })

  it('answers a catalog file that is not JSON with its line and column, never its text, in the answer or the log', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-catalog-'))
    const file = join(dir, 'models.json')
    // A key pasted unquoted where the reference belongs: Node's JSON.parse message would quote it.
    await writeFile(file, '[{"id": "org/m", "entities": ["*"],\n  "apiKeyRef": sk-live-0123456789abcdef}]')
    config.inference.modelsFile = file
    clearCatalogCache()
    const logged = (['error', 'warn', 'info', 'debug'] as const).map((level) => vi.spyOn(logger, level))

    // Act
    const failure = await allModels().then(
      () => new Error('loaded'),
      (error: unknown) => error as Error,
    )
    const printed = inspect(
      logged.flatMap((spy) => spy.mock.calls),
      { depth: 12 },
    )
    for (const spy of logged) spy.mockRestore()
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(failure).toMatchObject({
      statusCode: 503,
      message: 'The model catalog is misconfigured: LOOM_MODELS_FILE is not valid JSON (line 2, column 16)',
    })
    expect(`${inspect(failure, { depth: 12 })}${printed}`).not.toContain('sk-live')
    expect(printed).toContain(file)
    expect(printed).toContain('line 2, column 16')
  })

  it('reads per-project limits from a catalog file and refuses one that is not a positive integer', () => {
    // Prepare
    const model = { id: 'm', backend: { kind: 'reference' }, entities: ['*'], rpm: 60, tpm: 1000, concurrency: 2 }

    // Act
    const parsed = parseCatalogFile(JSON.stringify(model))

    // Assess
    expect(parsed).toEqual([model])
    expect(() => parseCatalogFile(JSON.stringify([{ ...model, concurrency: 0 }]))).toThrow(
      /invalid model at 0\.concurrency/,
    )
    expect(() => parseCatalogFile(JSON.stringify({ ...model, rpm: 2.5 }))).toThrow(/invalid model at rpm/)
  })

  it('refuses a file entry whose base URL is not http or https, or whose numbers are out of range', () => {
    // Prepare
    const entry = (backend: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      id: 'm',
      backend: { kind: 'openai-compatible', baseUrl: 'http://x/v1', ...backend },
      entities: ['*'],
      ...extra,
    })
    const problem = (item: unknown) => {
      try {
        parseCatalogFile(JSON.stringify([item]), 'models.json')
        return 'accepted'
      } catch (error) {
        return (error as Error).message
      }
    }

    // Act
    const problems = [
      entry({ baseUrl: 'ftp://x' }),
      entry({ baseUrl: 'x' }),
      entry({ connectTimeoutMs: 0 }),
      entry({}, { maxModelLen: 1.5 }),
      entry({}, { created: 1_700_000_000_000 }),
      entry({}, { prices: { prompt: -1, completion: 0 } }),
      entry({ baseUrl: 'https://x/v1' }, { maxModelLen: 8192, created: 0 }),
    ].map(problem)

    // Assess
    expect(problems[0]).toBe(
      'models.json: invalid model at 0.backend.baseUrl: must be an http or https URL, such as http://10.0.0.5:8000/v1',
    )
    expect(problems.slice(1).map((p) => /invalid model at (\S+):/.exec(p)?.[1] ?? p)).toEqual([
      '0.backend.baseUrl',
      '0.backend.connectTimeoutMs',
      '0.maxModelLen',
      '0.created',
      '0.prices.prompt',
      'accepted',
    ])
  })

  it('still reads a table entry written past the checks, so one bad entry does not hide the catalog', async () => {
    // Prepare
    const id = `qa/raw-${randomUUID().slice(0, 8)}`
    await putRawModel({
      id,
      backend: { kind: 'openai-compatible', baseUrl: 'ftp://x' },
      entities: ['*'],
      maxModelLen: 0,
    })

    // Act
    const models = await allModels()

    // Assess
    expect(models.find((m) => m.id === id)).toMatchObject({ backend: { baseUrl: 'ftp://x' }, maxModelLen: 0 })
  })

  it('gives each entity only its permitted models and 404s the rest', async () => {
    // Prepare
    const entity = `ent-${randomUUID().slice(0, 8)}`
    const id = `org/private-${randomUUID().slice(0, 8)}`
    await putModel({ id, backend: { kind: 'reference' }, entities: [entity] })
    clearCatalogCache()

    // Act
    const mine = await modelsFor(entity)
    const theirs = await modelsFor(`other-${entity}`)

    // Assess
    expect(mine.map((m) => m.id)).toContain(id)
    expect(theirs.map((m) => m.id)).not.toContain(id)
    // It answers without a promise once the catalog is cached: wrapped, both ways read alike.
    const resolve = async (name: string, as: string) => resolveModel(name, as)
    await expect(resolve(id, `other-${entity}`)).rejects.toMatchObject({ statusCode: 404, param: 'model' })
    await expect(resolve(id, entity)).resolves.toMatchObject({ id })
  })
})
