import { type BuildOptions, build } from 'esbuild'
import { LAMBDA_BUNDLE } from '../../infra/bundling.js'

/**
 * Bundles `entry` into `outfile` with the esbuild settings every deployed function gets (infra/bundling.ts), so a
 * bench runs the code that is deployed: minified ESM without the `keepNames` wrappers tsx adds when it runs the
 * sources. `variant` overrides settings (another alias, externals).
 */
export async function bundleAsDeployed(entry: string, outfile: string, variant: BuildOptions = {}): Promise<string> {
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: LAMBDA_BUNDLE.format,
    target: LAMBDA_BUNDLE.target,
    minify: LAMBDA_BUNDLE.minify,
    sourcemap: LAMBDA_BUNDLE.sourcemap,
    mainFields: [...LAMBDA_BUNDLE.mainFields],
    banner: { js: LAMBDA_BUNDLE.banner },
    alias: LAMBDA_BUNDLE.alias,
    absWorkingDir: process.cwd(),
    outfile,
    logLevel: 'silent',
    ...variant,
  })
  return outfile
}
