import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { config } from '#shared/config'
import { putModel } from '#shared/db/model-repository'
import { allModels, clearCatalogCache, modelsFor, parseCatalogFile, resolveModel } from '#shared/inference/catalog'

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
    await expect(allModels()).rejects.toThrow(/invalid model at 0\.backend/)
    await rm(dir, { recursive: true, force: true })
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
