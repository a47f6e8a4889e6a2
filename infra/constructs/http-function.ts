import { Duration, RemovalPolicy } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda'
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import type { Construct } from 'constructs'

/** Props of a Loom function: the handler's folder under `functions/`, plus any NodejsFunction override. */
export type HttpFunctionProps = Omit<NodejsFunctionProps, 'entry'> & {
  /** The manifest id, `<family>/<verb-noun>`. */
  functionId: string
  /**
   * Log retention.
   * @default RetentionDays.ONE_MONTH
   */
  logRetention?: RetentionDays
}

const FUNCTIONS_DIR = new URL('../../functions/', import.meta.url)

/**
 * A NodejsFunction with Loom's defaults: nodejs22.x on arm64, minified ESM bundle with source maps, X-Ray tracing,
 * an explicit log group, and `props.environment` merged into (not replacing) the defaults.
 */
export class HttpFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: HttpFunctionProps) {
    const { functionId, logRetention, environment, bundling, ...rest } = props
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    })
    super(scope, id, {
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(29),
      tracing: Tracing.ACTIVE,
      logGroup,
      ...rest,
      entry: new URL(`${functionId}/handler.ts`, FUNCTIONS_DIR).pathname,
      handler: 'handler',
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'loom',
        ...environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        minify: true,
        sourceMap: true,
        target: 'node22',
        mainFields: ['module', 'main'],
        // ESM output needs `require` for the CommonJS dependencies esbuild inlines.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
        ...bundling,
      },
    })
  }

  /** Points the function at the table and grants exactly the access it needs. */
  bindTable({ table, accessMode }: { table: ITable; accessMode: 'read' | 'write' }): void {
    this.addEnvironment('LOOM_TABLE_NAME', table.tableName)
    if (accessMode === 'write') table.grantReadWriteData(this)
    else table.grantReadData(this)
  }
}
