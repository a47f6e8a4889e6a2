import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs'

/** The functions that price calls (`include_costs`): they read the default price table (shared/tracing/costs.ts). */
export const PRICED_FUNCTION_IDS: ReadonlySet<string> = new Set([
  'tracing/read-call',
  'tracing/stream-query-calls',
  'tracing/trace-usage',
  'tracing/calls-usage',
])

/** The table in the sources, relative to the project root. */
export const PRICE_TABLE = 'shared/tracing/default-prices.json'

/**
 * Bundling hooks of the priced functions: the default price table (about 300 KB of JSON, thousands of rows) is
 * copied beside the bundle's `index.mjs`, where `shared/tracing/costs.ts` reads it on the first priced request,
 * instead of being compiled into every bundle that imports costs.ts: the bundles stay under their 400 KB budget and
 * the cold start does not parse the table unless a request asks for costs.
 */
export const PRICES_COMMAND_HOOKS: ICommandHooks = {
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (inputDir: string, outputDir: string) => [`cp "${inputDir}/${PRICE_TABLE}" "${outputDir}/"`],
}
