import { randomInt } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { CHROMIUM_MISSING, findChromium } from './test/support/chromium.js'

/**
 * Test files that need no DynamoDB table: they run in the `unit` project, without the embedded DynamoDB and table
 * that `test/setup.ts` starts for every other file (about half a second each). An explicit list, so a new file lands
 * in the `db` project until it is listed here; a listed file that reaches DynamoDB fails at once (test/setup-unit.ts).
 */
export const UNIT_FILES = [
  'test/docs-links.test.ts',
  'test/import-cycles.test.ts',
  'test/bench/raw-http.test.ts',
  'test/bench/wake-latency.test.ts',
  'test/console/api.test.ts',
  'test/console/bundle.test.ts',
  'test/console/calls.test.ts',
  'test/console/charts.test.ts',
  'test/console/csv.test.ts',
  'test/console/feedback-rows.test.ts',
  'test/console/format.test.ts',
  'test/console/page-views.test.ts',
  'test/console/refs.test.ts',
  'test/console/route.test.ts',
  'test/console/table-rows.test.ts',
  'test/console/traces-view.test.ts',
  'test/console/tree.test.ts',
  'test/console/usage.test.ts',
  'test/console/usage-report.test.ts',
  'test/functions/meta/get-health.test.ts',
  'test/functions/meta/get-openapi.test.ts',
  'test/functions/meta/get-server-info.test.ts',
  'test/functions/route-examples.test.ts',
  'test/infra/compliance.test.ts',
  'test/infra/deployment.test.ts',
  'test/infra/stacks.test.ts',
  'test/scripts/banner.test.ts',
  'test/scripts/data-dir-lock.test.ts',
  'test/scripts/graceful-close.test.ts',
  'test/scripts/run-script.test.ts',
  'test/scripts/start.test.ts',
  'test/shared/auth/api-key.test.ts',
  'test/shared/config.test.ts',
  'test/shared/db/retry-strategy.test.ts',
  'test/shared/errors/validation-issues.test.ts',
  'test/shared/engine/chat-template.test.ts',
  'test/shared/engine/json-schema-fuzz.test.ts',
  'test/shared/engine/openai-server.test.ts',
  'test/shared/engine/reference-backend.test.ts',
  'test/shared/engine/sampling.test.ts',
  'test/shared/engine/structured-outputs.test.ts',
  'test/shared/engine/tokenizer.test.ts',
  'test/shared/http/authorizer-context.test.ts',
  'test/shared/http/inference-project.test.ts',
  'test/shared/http/json-scan.test.ts',
  'test/shared/http/node-bindings.test.ts',
  'test/shared/inference/cancellation.test.ts',
  'test/shared/inference/credentials.test.ts',
  'test/shared/inference/upstream-errors.test.ts',
  'test/shared/inference/upstream-http.test.ts',
  'test/shared/inference/sse-framing.test.ts',
  'test/shared/inference/stream-tally.test.ts',
  'test/shared/inference/trace-completion.test.ts',
  'test/shared/group-commit.test.ts',
  'test/shared/json-file.test.ts',
  'test/shared/otel/attribute-tree.test.ts',
  'test/shared/otel/otlp-json.test.ts',
  'test/shared/otel/otlp-json-int64.test.ts',
  'test/shared/otel/otlp-protobuf.test.ts',
  'test/shared/otel/shorten-name.test.ts',
  'test/shared/otel/span-to-call.test.ts',
  'test/shared/refreshing-cache.test.ts',
  'test/shared/schemas/datetime.test.ts',
  'test/shared/schemas/model.test.ts',
  'test/shared/schemas/present-fields.test.ts',
  'test/shared/tracing/clickhouse-json.test.ts',
  'test/shared/tracing/datetime.test.ts',
  'test/shared/tracing/digest.test.ts',
  'test/shared/tracing/ilike.test.ts',
  'test/shared/tracing/ids.test.ts',
  'test/shared/tracing/json-exact.test.ts',
  'test/shared/tracing/query-eval.test.ts',
  'test/shared/tracing/request-datetime.test.ts',
  'test/shared/tracing/time.test.ts',
  'test/shared/training/group-codec.test.ts',
  'test/shared/training/log-trace.test.ts',
  'test/shared/training/metrics.test.ts',
  'test/shared/training/route-docs.test.ts',
]

// Property runs (fast-check) are seeded: a fixed seed by default, so every run draws the same inputs; LOOM_FC_SEED
// replays a given seed, or `random` explores a new one. The seed is printed once per run. The same seed is the
// reference engine's LOOM_ENGINE_SEED (vLLM's --seed), so what the built-in model samples for requests without a
// `seed` repeats from run to run too.
const FC_DEFAULT_SEED = 1_511_202_615

function fcSeed(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return FC_DEFAULT_SEED
  if (raw.trim() === 'random') return randomInt(2 ** 31)
  const seed = Number(raw)
  if (!Number.isSafeInteger(seed)) throw new Error(`LOOM_FC_SEED must be an integer or 'random', not '${raw}'`)
  return seed
}

const seed = fcSeed(process.env.LOOM_FC_SEED)
process.stdout.write(
  `fast-check and engine seed ${seed} (LOOM_FC_SEED=${seed} repeats this run's property inputs and sampled text)\n`,
)

/** The console's browser tests: they need a Chromium (test/support/chromium.ts); without one they are left out, loudly. */
export const BROWSER_FILES = [
  'test/console/browser.test.ts',
  'test/console/browser-tree.test.ts',
  'test/console/browser-usage.test.ts',
]
const skipped = findChromium() === undefined ? BROWSER_FILES : []
if (skipped.length > 0) process.stdout.write(`${CHROMIUM_MISSING}\n`)

// Options both projects share. Projects list them rather than `extends: true`, so a globalSetup that a lane adds to
// this config (vitest.dynamodb-local.config.ts) runs once for the run, not once per project.
// CDK_VALIDATION=false: the CDK's built-in CloudFormation validation costs about 10 s of CPU per synth, and the infra
// tests synthesise dozens of apps; test/infra/compliance.test.ts runs it once on the real stacks.
const common = {
  env: {
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    AWS_REGION: 'us-east-1',
    LOOM_ENGINE_SEED: String(seed),
    CDK_VALIDATION: 'false',
    // The deployed (Lambda) body limit, so the body-limit tests build 5 MiB bodies rather than the local server's 32 MiB.
    LOOM_MAX_BODY_BYTES: String(5 * 1024 * 1024),
  },
  pool: 'forks',
  // The young generation `npm start` gives the server: the DynamoDB-heavy files (dynalite, the SDK, large bodies)
  // spend 5–7% less CPU in scavenges with it.
  execArgv: ['--max-semi-space-size=64'] as string[],
  // Files share their worker process and its loaded modules: importing the AWS SDK, Hono, zod and Loom's modules
  // once per worker instead of once per file halves the suite's CPU time (291 s -> 174 s here). test/setup-common.ts
  // gives every file the worker's starting state back: the environment, `config`, no cached look-ups, no spies.
  isolate: false,
  // Generous: CDK synths and JVM starts take 10–45 s when the suite shares 2 cores with other work; a hang still fails.
  testTimeout: 60_000,
  hookTimeout: 60_000,
} as const

/**
 * Files that start DynamoDB Local themselves (a JVM, several times each: the launcher's restarts, `npm start` with
 * `LOOM_DYNAMODB=local`). They run in the `test:dynamodb-local` lane, the lane about AWS's own engine, which `.ci/run`
 * runs after `npm test`; the default lane, on dynalite, leaves them out.
 */
export const DYNAMODB_LOCAL_FILES = ['test/scripts/dynamodb-local.test.ts', 'test/scripts/start-dynamodb-local.test.ts']

/** Which DynamoDB a run's files use: a dynalite per file (`npm test`), or one DynamoDB Local for the run. */
export type Lane = 'dynalite' | 'dynamodb-local'

/** The suite's configuration for a lane. */
export function suiteConfig(lane: Lane) {
  const laneOnly = lane === 'dynalite' ? DYNAMODB_LOCAL_FILES : []
  return defineConfig({
    test: {
      ...common,
      // Vitest's default is one worker per core less one: a single worker on a 2-core machine. Much of the suite
      // waits on child processes, sockets, a JVM and a browser, so one worker per core and at least 3 finish sooner
      // (on 2 cores: 322 s instead of 586 s, measured in one session on a busy host).
      maxWorkers: Math.max(3, availableParallelism()),
      provide: { fcSeed: seed },
      ...(lane === 'dynamodb-local' ? { globalSetup: ['test/support/dynamodb-local-global-setup.ts'] } : {}),
      projects: [
        {
          test: {
            ...common,
            name: 'unit',
            include: UNIT_FILES,
            setupFiles: ['test/setup-env.ts', 'test/setup-unit.ts'],
          },
        },
        {
          test: {
            ...common,
            name: 'db',
            include: ['test/**/*.test.ts'],
            exclude: [...UNIT_FILES, ...skipped, ...laneOnly],
            setupFiles: ['test/setup-env.ts', 'test/setup.ts'],
          },
        },
      ],
    },
  })
}

export default suiteConfig('dynalite')
