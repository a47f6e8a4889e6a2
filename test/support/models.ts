import { randomUUID } from 'node:crypto'
import { afterAll } from 'vitest'
import { putModel } from '#shared/db/model-repository'
import { clearCatalogCache } from '#shared/inference/catalog'
import type { CatalogModel } from '#shared/schemas/model'
import { newCaller, type TestCaller } from './auth.js'
import { startVllmUpstream, type VllmUpstream } from './vllm-upstream.js'

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

/** What `upstreamModelFixture` sets up for a test file. */
export type UpstreamModelFixture = { upstream: VllmUpstream; caller: TestCaller; model: string }

/**
 * Starts a loopback vLLM-protocol upstream, registers a fresh caller and a catalog model served by it for the caller's
 * entity, and closes the upstream after the file's tests. Awaited at a test file's top level.
 */
export async function upstreamModelFixture(
  overrides: (baseUrl: string) => Partial<CatalogModel> = () => ({}),
): Promise<UpstreamModelFixture> {
  const upstream = await startVllmUpstream()
  afterAll(() => upstream.close())
  const caller = await newCaller()
  const model = (await addUpstreamModel(upstream.baseUrl, [caller.entity], overrides(upstream.baseUrl))).id
  return { upstream, caller, model }
}
