import { randomUUID } from 'node:crypto'
import { PutCommand } from '@aws-sdk/lib-dynamodb'
import { afterAll } from 'vitest'
import { db, table } from '#shared/db/client'
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

/**
 * Writes a catalog entry straight to the table, past `putModel`'s checks: an entry written by hand or by an older
 * version, which the catalog must still read. Clears the catalog cache.
 */
export async function putRawModel(entry: Record<string, unknown> & { id: string }): Promise<void> {
  await db().send(new PutCommand({ TableName: table(), Item: { PK: 'MODELS', SK: `MODEL#${entry.id}`, ...entry } }))
  clearCatalogCache()
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
