import { type BuildOptions, build } from 'esbuild'
import { LAMBDA_ESBUILD_OPTIONS } from '../../infra/bundling.js'

/**
 * Bundles `entry` into `outfile` with the esbuild settings every deployed function gets (infra/bundling.ts), so a
 * bench runs the code that is deployed: minified ESM without the `keepNames` wrappers tsx adds when it runs the
 * sources. `variant` overrides settings (another alias, externals).
 */
export async function bundleAsDeployed(entry: string, outfile: string, variant: BuildOptions = {}): Promise<string> {
  await build({
    ...LAMBDA_ESBUILD_OPTIONS,
    entryPoints: [entry],
    absWorkingDir: process.cwd(),
    outfile,
    logLevel: 'silent',
    ...variant,
  })
  return outfile
}
