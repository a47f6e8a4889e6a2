import { setupFailureLine } from './setup-error.js'

/**
 * Runs a CLI script's body, loaded by `load` (a dynamic import, so that a bad setting rejected as shared/config.ts
 * loads is caught too): a setup problem is one line on stderr and exit status 1, anything unexpected keeps its stack
 * trace. Resolves with the exit status the body gave.
 */
export async function runScript(load: () => Promise<(argv: string[]) => Promise<number>>): Promise<number> {
  try {
    const main = await load()
    return await main(process.argv.slice(2))
  } catch (error) {
    const line = setupFailureLine(error)
    if (line === undefined) throw error
    process.stderr.write(`Loom: ${line}\n`)
    return 1
  }
}
