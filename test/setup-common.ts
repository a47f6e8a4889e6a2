import fc from 'fast-check'
import { inject, vi } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's fast-check seed (vitest.config.ts: `LOOM_FC_SEED`, else a fixed default). */
    fcSeed: number
  }
}

// Every test file, in either project: property runs draw from the run's seed, so a run repeats exactly; a failure
// prints its seed and path, and LOOM_FC_SEED=<seed> replays it.
const seed = inject('fcSeed')
if (!Number.isSafeInteger(seed)) throw new Error('No fast-check seed: run the tests through vitest.config.ts')
fc.configureGlobal({ seed })

for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  vi.spyOn(console, method).mockImplementation(() => undefined)
}
