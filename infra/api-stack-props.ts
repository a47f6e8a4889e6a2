import type { StackProps } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import type { FunctionEntry } from '../functions/manifest.js'
import type { RateLimitAclProps } from './constructs/rate-limit-acl.js'
import type { ConcurrencySettings } from './route-stack.js'

/** Props of the API stack. */
export type ApiStackProps = StackProps & {
  table: ITable
  /**
   * Stage name of the deployment (the URL's first segment and the `Stage` dimension of API Gateway's metrics).
   * @default 'prod'
   */
  stageName?: string
  /**
   * Name of the REST API: the `ApiName` dimension of API Gateway's metrics, so it differs per deployment in an account.
   * @default `loom-${stageName}`
   */
  apiName?: string
  /**
   * Secrets Manager name prefix whose secrets the chat function may read (catalog `secret:<id>` references).
   * @default `loom/${stageName}/`: one scope per deployment, so a dev stack cannot read production's secrets
   */
  secretNamePrefix?: string
  /**
   * ARN of the AWS Parameters and Secrets Lambda Extension layer (region- and arm64-specific).
   * @default - CDK's regional table for extension version 1.0.103 (arm64)
   */
  secretsExtensionLayerArn?: string
  /**
   * Share of requests answered 5xx (0..1, 5-minute average) that raises the server-error alarm.
   * @default 0.05
   */
  serverErrorRateThreshold?: number
  /**
   * p99 latency (ms, 5-minute windows) of the routes that end within 29 s (all but the long-running streams) that
   * raises the latency alarm.
   * @default 5_000
   */
  p99LatencyThresholdMs?: number
  /**
   * p99 duration (ms, 5-minute windows) of a long-running streaming function that raises its alarm: streams approaching the
   * 15-minute cap, which API Gateway and Lambda cut.
   * @default 600_000 (10 minutes)
   */
  streamDurationThresholdMs?: number
  /**
   * Address subscribed by email to the alarm topic (AWS sends a confirmation message first).
   * @default - no subscription; subscribe to the `AlarmTopicArn` output yourself
   */
  alarmEmail?: string
  /**
   * Reserved concurrency of the authorizer, the streaming functions and each family's buffered functions.
   * @default DEFAULT_CONCURRENCY: 50 for the authorizer, 100 per long-running streaming function, none for the rest
   */
  concurrency?: ConcurrencySettings
  /**
   * An AWS WAF web ACL on the stage with a rate-based rule per client IP (a fixed monthly cost; docs/costs.md).
   * @default - none
   */
  waf?: Pick<RateLimitAclProps, 'limit' | 'windowSeconds'>
  /**
   * Create an IAM role that lets API Gateway write to CloudWatch Logs and set it as the region's API Gateway account
   * setting (`AWS::ApiGateway::Account`, retained when the stack is deleted). That setting is one per account and
   * region, shared by every REST API there, so `false` leaves it to whoever manages it (a platform team); the stage's
   * execution and access logs then need a role already set there, or the deploy fails.
   * @default true
   */
  cloudWatchRole?: boolean
  /**
   * The functions to deploy, one Lambda each.
   * @default FUNCTIONS (functions/manifest.ts)
   */
  functions?: readonly FunctionEntry[]
}
