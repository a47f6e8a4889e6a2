import type { BuildOptions } from 'esbuild'

/**
 * The esbuild settings of every deployed function, shared by `infra/constructs/http-function.ts` and
 * `npm run bench:cold` so the bench measures exactly what is deployed.
 *
 * The AWS SDK is bundled, not taken from the Lambda runtime: resolving `@aws-sdk/*` and `@smithy/*` from the
 * runtime's `node_modules` cost 90–140 ms of cold import per function (module resolution of a few hundred files),
 * the bundled SDK about half of that. The SDK's default credential chain is replaced by the environment-only
 * provider Lambda needs (`shared/db/lambda-credentials.ts`), which keeps every non-streaming bundle under 400 KB.
 */
export const LAMBDA_BUNDLE = {
  format: 'esm',
  target: 'node22',
  minify: true,
  sourcemap: true,
  // ESM entry points of the SDK and Hono tree-shake better than their CommonJS builds.
  mainFields: ['module', 'main'],
  // ESM output needs `require` for the CommonJS dependencies esbuild inlines.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  // Paths relative to the project root, the working directory of both CDK's local bundling and the bench.
  alias: { '@aws-sdk/credential-provider-node': './shared/db/lambda-credentials.ts' } as Record<string, string>,
} as const

/** `LAMBDA_BUNDLE` as esbuild's own options, for benches and tests that bundle functions exactly as CDK does. */
export const LAMBDA_ESBUILD_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: LAMBDA_BUNDLE.format,
  target: LAMBDA_BUNDLE.target,
  minify: LAMBDA_BUNDLE.minify,
  sourcemap: LAMBDA_BUNDLE.sourcemap,
  mainFields: [...LAMBDA_BUNDLE.mainFields],
  banner: { js: LAMBDA_BUNDLE.banner },
  alias: LAMBDA_BUNDLE.alias,
}
