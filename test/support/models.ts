import { randomUUID } from 'node:crypto'
import { putModel } from '#shared/db/model-repository'
import { clearCatalogCache } from '#shared/inference/catalog'
import type { CatalogModel } from '#shared/schemas/model'

/** Registers a catalog model served by an upstream base URL, usable by the given entities; unique id per call. */
export async function addUpstreamModel(
  baseUrl: string,
  entities: string[],
  overrides: Partial<CatalogModel> = {},
): Promise<CatalogModel> {
  const model: CatalogModel = {
    id: `test-org/model-${randomUUID().slice(0, 8)}`,
    backend: { kind: 'openai-compatible', baseUrl },
    entities,
    ...overrides,
  }
  await putModel(model)
  clearCatalogCache()
  return model
}
