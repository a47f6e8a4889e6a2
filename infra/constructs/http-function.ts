import { fileURLToPath } from 'node:url'
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda'
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import type { Construct } from 'constructs'
import { FUNCTIONS } from '../../functions/manifest.js'
import { GLOBAL_INDEXES } from '../../shared/db/table.js'
import { LAMBDA_BUNDLE } from '../bundling.js'

/** Props of a Loom function: the handler's folder under `functions/`, plus any NodejsFunction override. */
export type HttpFunctionProps = Omit<NodejsFunctionProps, 'entry' | 'role'> & {
  /** The manifest id, `<family>/<verb-noun>`. */
  functionId: string
  /**
   * Log retention.
   * @default RetentionDays.ONE_MONTH
   */
  logRetention?: RetentionDays
  /**
   * Start Node with `--enable-source-maps`, so logged stack traces point into the TypeScript sources. It parses the
   * bundle's source map at every cold start: 12–26 ms of cold import measured (docs/benchmarks.md), a quarter of the
   * 80 ms budget, so it is off by default. The map ships in every bundle either way, so setting
   * `NODE_OPTIONS=--enable-source-maps` on a deployed function turns it on without a rebuild.
   * @default false
   */
  sourceMaps?: boolean
}

const FUNCTIONS_DIR = new URL('../../functions/', import.meta.url)

/**
 * The reads the data layer issues (shared/db), and nothing else: no Scan, no `DescribeTable` (only
 * shared/db/ensure-table.ts calls it, for the local scripts).
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']
/** The writes the data layer issues: no transactions. Granted on the table only; an index is written through it. */
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
]
/**
 * The partition keys of the items only the local CLIs write (scripts/local/keys-cli.ts, models-cli.ts), never a
 * deployed function: key records (`APIKEY#<keyId>`, shared/db/api-key-repository.ts), memberships (`USER#<user>`,
 * membership-repository.ts), the model catalog (`MODELS`, model-repository.ts) and one-time markers (`MARKER#<name>`,
 * marker-repository.ts: the local bootstrap's "first key shown once"). No other item's partition key matches them
 * (docs/data-model.md). A writing function's role denies `TABLE_WRITE_ACTIONS` on them, so a flaw in
 * one function cannot mint a key, join an entity or repoint a model; `test/infra/iam-policy-proxy.test.ts` runs every
 * function under that Deny.
 */
export const ADMIN_LEADING_KEYS = ['APIKEY#*', 'USER#*', 'MODELS', 'MARKER#*']

/**
 * The writes the rate limiter issues for a key's `rpm` and `concurrency` (shared/db/rate-limit-repository.ts): the
 * window counter's `UpdateItem` (`ADD requests`), the concurrency slot's conditional `PutItem` and its `DeleteItem`
 * on release. Every authenticated route runs the limiter (shared/http/rate-limit.ts), read-only ones included.
 */
export const LIMITER_WRITE_ACTIONS = ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem']
/**
 * The partition keys of a key's limiter items, `RATE#KEY#<keyId>` (window counters) and `SLOT#KEY#<keyId>`
 * (concurrency slots): the only items a read-only function may write. Model scopes (`PROJMODEL#…`) are the chat
 * function's, which writes anyway. `test/infra/iam-policy-proxy.test.ts` runs every function under its synthesized
 * policy, so a new limiter key shape fails there.
 */
export const LIMITER_LEADING_KEYS = ['RATE#KEY#*', 'SLOT#KEY#*']

/**
 * A NodejsFunction with Loom's defaults: nodejs22.x on arm64, minified ESM bundle with source map, X-Ray tracing,
 * an explicit log group, and `props.environment` merged into (not replacing) the defaults. Its role is its own, with
 * write access to its own log group only (no AWSLambdaBasicExecutionRole, which grants logs on every group).
 */
export class HttpFunction extends NodejsFunction {
  readonly executionRole: Role
  /** The manifest id (`LOOM_FUNCTION_ID`). */
  readonly functionId: string

  constructor(scope: Construct, id: string, props: HttpFunctionProps) {
    const { functionId, logRetention, sourceMaps, environment, bundling, ...rest } = props
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    })
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') })
    logGroup.grantWrite(role)
    super(scope, id, {
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(29),
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      ...rest,
      // A file path, not the URL's percent-encoded `pathname` (a checkout under "My Projects" would not be found).
      entry: fileURLToPath(new URL(`${functionId}/handler.ts`, FUNCTIONS_DIR)),
      handler: 'handler',
      environment: {
        ...(sourceMaps === true ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        POWERTOOLS_SERVICE_NAME: 'loom',
        // The `service` dimension of the function's request metrics (shared/http/metrics.ts).
        LOOM_FUNCTION_ID: functionId,
        ...environment,
      },
      // The same esbuild settings `npm run bench:cold` measures (infra/bundling.ts).
      bundling: {
        format: OutputFormat.ESM,
        minify: LAMBDA_BUNDLE.minify,
        sourceMap: LAMBDA_BUNDLE.sourcemap,
        target: LAMBDA_BUNDLE.target,
        mainFields: [...LAMBDA_BUNDLE.mainFields],
        banner: LAMBDA_BUNDLE.banner,
        bundleAwsSDK: true,
        esbuildArgs: {
          '--alias': Object.entries(LAMBDA_BUNDLE.alias).map(([from, to]) => `${from}=${to}`),
        },
        ...bundling,
      },
    })
    this.executionRole = role
    this.functionId = functionId
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions; tracing needs "*".',
    })
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'The runtime is pinned to nodejs22.x on purpose: the code and bundle target Node 22 (STYLE.md §9).',
    })
  }

  /**
   * Points the function at the table and grants exactly the data layer's reads on the table and its named indexes
   * (no `index/*` wildcard). A writing function also gets the writes, on the table only, and an explicit Deny of
   * them on the items only the local CLIs write (`ADMIN_LEADING_KEYS`). A read-only function writes nothing but its
   * caller's rate-limit items: when it is an authenticated manifest function (it runs the limiter), it may
   * `UpdateItem`, `PutItem` and `DeleteItem` items whose partition key is a key's limiter key, enforced by a
   * `dynamodb:LeadingKeys` condition. The authorizer, which runs no limiter, gets reads only.
   */
  bindTable({
    table,
    accessMode,
    rateLimited = FUNCTIONS.some((entry) => entry.id === this.functionId && entry.auth),
  }: {
    table: ITable
    accessMode: 'read' | 'write'
    /**
     * Whether the function runs the rate limiter (every authenticated route does).
     * @default - the manifest entry of `functionId` has `auth: true`
     */
    rateLimited?: boolean
  }): void {
    this.addEnvironment('LOOM_TABLE_NAME', table.tableName)
    this.executionRole.addToPrincipalPolicy(
      new PolicyStatement({
        actions: TABLE_READ_ACTIONS,
        resources: [table.tableArn, ...GLOBAL_INDEXES.map((index) => `${table.tableArn}/index/${index.indexName}`)],
      }),
    )
    if (accessMode === 'write') {
      this.executionRole.addToPrincipalPolicy(
        new PolicyStatement({ actions: TABLE_WRITE_ACTIONS, resources: [table.tableArn] }),
      )
      this.executionRole.addToPrincipalPolicy(
        new PolicyStatement({
          effect: Effect.DENY,
          actions: TABLE_WRITE_ACTIONS,
          resources: [table.tableArn],
          // ForAnyValue: a request with any such partition key is refused (a batch with one among many included).
          conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ADMIN_LEADING_KEYS } },
        }),
      )
    }
    if (accessMode === 'read' && rateLimited) {
      this.executionRole.addToPrincipalPolicy(
        new PolicyStatement({
          actions: LIMITER_WRITE_ACTIONS,
          // The limiter's items live in the table itself, never written through an index.
          resources: [table.tableArn],
          // ForAllValues: every partition key the request touches must be a limiter key.
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': LIMITER_LEADING_KEYS } },
        }),
      )
    }
  }
}
