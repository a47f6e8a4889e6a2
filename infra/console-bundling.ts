import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs'

/** The manifest id of the function that serves the Loom Console. */
export const CONSOLE_FUNCTION_ID = 'meta/get-console'

/**
 * Bundling hooks of the console function: after esbuild has bundled the handler, the console itself is built (esbuild
 * again, `shared/console/build.ts`) into `console/` beside the bundle's `index.mjs`, where `shared/console/files.ts`
 * reads it at run time. So the deployed function ships prebuilt, content-hashed files and never needs esbuild;
 * nothing built is committed. Runs in CDK's local bundling (esbuild is a devDependency, so no Docker).
 */
export const CONSOLE_COMMAND_HOOKS: ICommandHooks = {
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (inputDir: string, outputDir: string) => [
    `cd "${inputDir}" && node --import tsx shared/console/build.ts "${outputDir}/console"`,
  ],
}
