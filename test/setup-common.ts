import fc from 'fast-check'
import { inject, vi } from 'vitest'
import { clearAuthCache } from '#shared/auth/authenticate'
import { config, localConfig } from '#shared/config'
import { forgetRegisteredProjects } from '#shared/db/project-repository'
import { resetEngines } from '#shared/engine/engine'
import { clearCatalogCache } from '#shared/inference/catalog'
// Streaming handlers take the Lambda runtime's `streamifyResponse` when their module first loads, in whichever file
// that is: every file gets the shim.
import './support/lambda-shim.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's fast-check seed (vitest.config.ts: `LOOM_FC_SEED`, else a fixed default). */
    fcSeed: number
  }
}

// Test files share their worker process (vitest.config.ts: `isolate: false`), so every file starts from the state
// the worker had before its first file: `config` as read then (test/setup-env.ts restores the environment), no cached
// key look-ups, model catalog or registered projects, cold reference engines (no prefix cache), no spies. What a
// file changes never reaches the next file in the worker.
type Baseline = { config: typeof config; localConfig: typeof localConfig }
const BASELINE = Symbol.for('loom.test.config')
const holder = globalThis as { [BASELINE]?: Baseline }
holder[BASELINE] ??= { config: structuredClone(config), localConfig: structuredClone(localConfig) }
const baseline = holder[BASELINE]

/**
 * Gives the file starting now the worker's starting state. Called by the setup files themselves (test/setup.ts,
 * test/setup-unit.ts), whose code runs again for every file: this module, which they import, is evaluated once per
 * worker, so code at its top level would reset the state for the worker's first file only (a file that raised
 * `config.maxBodyBytes` left it raised for the next, whose 413 test then read its 6 MiB body).
 */
export function resetFileState(): void {
  Object.assign(config, structuredClone(baseline.config))
  Object.assign(localConfig, structuredClone(baseline.localConfig))
  clearAuthCache()
  clearCatalogCache()
  resetEngines()
  forgetRegisteredProjects()

  // Every test file, in either project: property runs draw from the run's seed, so a run repeats exactly; a failure
  // prints its seed and path, and LOOM_FC_SEED=<seed> replays it.
  const seed = inject('fcSeed')
  if (!Number.isSafeInteger(seed)) throw new Error('No fast-check seed: run the tests through vitest.config.ts')
  fc.configureGlobal({ seed })

  vi.restoreAllMocks()
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation(() => undefined)
  }
}
