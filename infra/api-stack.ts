import {
  Annotations,
  ArnFormat,
  CfnOutput,
  CfnResource,
  Duration,
  Lazy,
  NestedStack,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib'
import {
  AccessLogFormat,
  AuthorizationType,
  Deployment,
  EndpointType,
  type IAuthorizer,
  IdentitySource,
  type IRestApi,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  Stage,
} from 'aws-cdk-lib/aws-apigateway'
import { Alarm, ComparisonOperator, type IMetric, Metric, TreatMissingData, Unit } from 'aws-cdk-lib/aws-cloudwatch'
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import { Key } from 'aws-cdk-lib/aws-kms'
import { FilterPattern, LogGroup, LogRetention, MetricFilter, RetentionDays } from 'aws-cdk-lib/aws-logs'
import { Topic } from 'aws-cdk-lib/aws-sns'
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions'
import type { Construct } from 'constructs'
import { FUNCTIONS, type FunctionEntry } from '../functions/manifest.js'
import { HttpFunction } from './constructs/http-function.js'
import { RateLimitAcl, type RateLimitAclProps } from './constructs/rate-limit-acl.js'
import {
  apiPath,
  type ConcurrencySettings,
  DEFAULT_CONCURRENCY,
  RouteStack,
  reservedConcurrencyOf,
  routeStackIdOf,
  sharedPrefixes,
} from './route-stack.js'

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

/**
 * The CloudFormation types whose definitions a REST API deployment snapshots: what the stage serves changes only when
 * a new `AWS::ApiGateway::Deployment` is created after them.
 */
const DEPLOYED_TYPES = new Set([
  'AWS::ApiGateway::RestApi',
  'AWS::ApiGateway::Resource',
  'AWS::ApiGateway::Method',
  'AWS::ApiGateway::Authorizer',
  'AWS::ApiGateway::GatewayResponse',
  'AWS::ApiGateway::Model',
  'AWS::ApiGateway::RequestValidator',
])

/**
 * A deployment is a snapshot: CloudFormation creates a new one only when the `Deployment` resource's logical id
 * changes, and CDK rotates that id only for methods added to a `RestApi` in its own stack with `deploy: true`
 * (aws/aws-cdk#12417, #13526), not for routes on an imported API in nested stacks, gateway responses or the
 * authorizer. So the id hashes the synthesised definition (type and properties, tokens resolved to logical ids) of
 * every API Gateway resource under `scope`, nested stacks included, computed at synthesis: a route, method,
 * integration (URI, transfer mode, timeout), authorizer, gateway response, binary media type or endpoint type that
 * differs from the last deploy makes a new deployment, which the stage then points to; an unchanged synth keeps the
 * id, so CloudFormation leaves the deployment alone. The deployment waits for all of them: for each nested stack
 * (CloudFormation cannot depend on a resource inside one, so on the stack, which completes after its methods) and
 * for the authorizer and gateway responses of the API's own stack.
 */
function bindDeploymentToDefinition(deployment: Deployment, scope: Construct): void {
  const definitions = () =>
    scope.node
      .findAll()
      .filter((c): c is CfnResource => CfnResource.isCfnResource(c) && DEPLOYED_TYPES.has(c.cfnResourceType))
  deployment.addToLogicalId(
    Lazy.any({
      produce: () =>
        definitions().map((resource) => {
          const stack = Stack.of(resource)
          const rendered = (resource as unknown as Renderable)._toCloudFormation().Resources
          // Type and properties only: metadata differs with `--no-path-metadata` and means nothing to API Gateway.
          return Object.entries(stack.resolve(rendered) as Rendered['Resources']).map(([id, r]) => ({
            stack: stack.node.path,
            id,
            type: r.Type,
            properties: r.Properties ?? {},
          }))
        }),
    }),
  )
  const targets = new Set<Construct>()
  for (const resource of definitions()) {
    if (resource.cfnResourceType === 'AWS::ApiGateway::RestApi') continue
    const stack = Stack.of(resource)
    targets.add(NestedStack.isNestedStack(stack) ? stack : resource)
  }
  for (const target of targets) deployment.node.addDependency(target)
}

type Rendered = { Resources: Record<string, { Type: string; Properties?: unknown }> }
/** `CfnElement._toCloudFormation`, internal to aws-cdk-lib but what its own deployment hash renders. */
type Renderable = { _toCloudFormation(): Rendered }

/** API Gateway's own error body: one for the whole API, so it carries each family's error key at once. */
function gatewayBody(message: string, type: string, code: number): string {
  return JSON.stringify({ error: { message, type, param: null, code }, reason: message, detail: message })
}

// The same body with API Gateway's own message (`$context.error.messageString`, a JSON string literal already), for
// the catch-all responses whose cause varies.
function gatewayContextBody(type: string, code: number): string {
  const message = '$context.error.messageString'
  return `{"error":{"message":${message},"type":"${type}","param":null,"code":${code}},"reason":${message},"detail":${message}}`
}

/**
 * Reserved concurrency is taken from the account's regional pool, which must keep 100 unreserved: a fresh account's
 * 1,000 fits three deployments at the defaults (250 each). Synthesis warns above 900 for one deployment.
 */
function warnOnReservations(
  stack: Stack,
  functions: readonly FunctionEntry[],
  concurrency: ConcurrencySettings,
  authorizer: number,
): void {
  const total = functions.reduce((sum, f) => sum + (reservedConcurrencyOf(f, concurrency) ?? 0), authorizer)
  if (total > 900)
    Annotations.of(stack).addWarningV2(
      'loom:reservedConcurrency',
      `${total} reserved concurrent executions: an account with the default quota of 1,000 cannot deploy this ` +
        '(100 must stay unreserved); lower the reservations or raise the quota.',
    )
}

/** The findings of CDK's singleton log-retention function, which this stack cannot configure. */
function acknowledgeLogRetentionProvider(stack: Stack, retention: LogRetention): void {
  const provider = stack.node.children.find((c) => c.node.id.startsWith('LogRetention') && c !== retention)
  if (provider === undefined) return
  const reason =
    "CDK's singleton LogRetention provider (sets the execution log group's retention at deploy time only); its " +
    'role, managed policy and runtime are fixed by aws-cdk-lib.'
  for (const id of [
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'AwsSolutions-IAM5[Resource::*]',
    'AwsSolutions-L1',
  ])
    Validations.of(provider).acknowledge({ id, reason })
}

/**
 * The alarms' SNS topic: SSL-only and encrypted with its own rotating KMS key (AwsSolutions SNS2/SNS3, KMS5), which
 * CloudWatch may use; the AWS managed `alias/aws/sns` key would not let CloudWatch publish to the topic.
 */
function alarmTopicOf(stack: Stack, email: string | undefined, stageName: string): Topic {
  const key = new Key(stack, 'AlarmTopicKey', {
    description: `Encrypts the Loom ${stageName} alarm topic`,
    enableKeyRotation: true,
    // Encrypts only notifications in flight, nothing stored: no reason to keep it after the stack.
    removalPolicy: RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
  })
  // CloudWatch acts only for this account's alarms in this region (confused deputy): the conditions AWS documents for
  // services publishing to encrypted topics, on both the key and the topic.
  const cloudwatch = new ServicePrincipal('cloudwatch.amazonaws.com')
  const onlyOurAlarms = {
    StringEquals: { 'aws:SourceAccount': stack.account },
    ArnLike: {
      'aws:SourceArn': stack.formatArn({
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: '*',
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    },
  }
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsUseKey',
      principals: [cloudwatch],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: onlyOurAlarms,
    }),
  )
  const topic = new Topic(stack, 'AlarmTopic', {
    displayName: `Loom ${stageName} alarms`,
    masterKey: key,
    enforceSSL: true,
  })
  // The topic policy CDK writes (the SSL-only Deny) replaces SNS's default one, so alarms get their own Allow.
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [cloudwatch],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: onlyOurAlarms,
    }),
  )
  if (email !== undefined) topic.addSubscription(new EmailSubscription(email))
  return topic
}

/**
 * The stage's JSON access log line: API Gateway's standard fields, who called (`principalId`: the key's user id, or
 * `unauthenticated` when the authorizer could not resolve the key; `$context.identity.user`/`caller` are always `-`
 * behind a Lambda authorizer), why API Gateway itself answered (`errorType`, e.g. `AUTHORIZER_FAILURE`, `THROTTLED`,
 * `INTEGRATION_FAILURE`; `-` when the function answered) and the Lambda service's status for the invocation
 * (`integrationStatus`, not the function's own: a throttle, an oversized payload or a failed invocation behind a
 * gateway 5xx; `$context.integrationErrorMessage` would say more, but it is free text that may hold a quote and break
 * the JSON line), plus what the latency alarm reads (`apiId`, `stage`, `resourcePath`, `responseLatency`).
 * `responseLatency` is written as a JSON number, so a metric filter can publish it.
 */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  principalId: '$context.authorizer.principalId',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  apiId: '$context.apiId',
  stage: '$context.stage',
  integrationLatency: '$context.integrationLatency',
  authorizerLatency: '$context.authorizer.latency',
  errorType: '$context.error.responseType',
  integrationStatus: '$context.integrationStatus',
  responseLatency: 0,
}).replace('"responseLatency":0', '"responseLatency":$context.responseLatency')

/** Namespace of the metrics Loom publishes (functions' EMF records and the access-log latency filter). */
const METRICS_NAMESPACE = 'Loom'

/**
 * One REST API (REST, not HTTP API, because chat completions stream) with a Regional endpoint, the shared REQUEST
 * authorizer, and nested stacks of route areas holding one Lambda per endpoint.
 */
export class ApiStack extends Stack {
  readonly api: RestApi
  readonly stage: Stage
  /** The nested stacks of routes and functions, by construct id (`TracingCallsRoutes`, …). */
  readonly routeStacks = new Map<string, RouteStack>()
  /** Every deployed function by manifest id. */
  readonly functions = new Map<string, HttpFunction>()
  readonly authorizerFunction: HttpFunction
  readonly webAcl: RateLimitAcl | undefined

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props)
    const stageName = props.stageName ?? 'prod'
    const functions = props.functions ?? FUNCTIONS
    const concurrency = props.concurrency ?? {}
    const cloudWatchRole = props.cloudWatchRole ?? true
    this.api = new RestApi(this, 'Api', {
      restApiName: props.apiName ?? `loom-${stageName}`,
      deploy: false,
      // The account's API Gateway logging role (AWS::ApiGateway::Account, retained): region-wide, opt-out by context.
      cloudWatchRole,
      // Regional, not edge-optimized: a streamed response may idle 5 minutes on a Regional endpoint against 30 s at
      // the edge, which cut non-streamed completions (upstream first byte allowed 120 s) and slow stream_query pages.
      // Clients far from the region pay the extra round trips; put CloudFront in front where that matters.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // `file/create` uploads multipart bodies that must not be read as UTF-8, so every type counts as binary and
      // request bodies reach Lambda base64-encoded. A buffered function's base64 answer (isBase64Encoded) is decoded
      // only when the request's first Accept type is a binary media type (the Weave SDKs send `Accept: */*`); text
      // answers pass unchanged, and streamed ones (`file/content`'s bytes) reach the client as written. Cost: Lambda's
      // 6 MB invoke limit caps a deployed request body near 4.4 MB (below LOOM_MAX_BODY_BYTES' 5 MiB).
      binaryMediaTypes: ['*/*'],
    })
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in each function against the same zod schemas, answering in the family contract ' +
        "shape (vLLM 400, pydantic 422); API Gateway's validator would answer in its own shape.",
    })
    if (cloudWatchRole) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: "API Gateway's account-level logging role; AWS maintains this policy for exactly that service.",
      })
    }
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Loom API keys (Bearer/Basic, as the OpenAI and Weave SDKs send them) are checked by a REQUEST authorizer.',
    })
    // A REST API needs at least one method in its own stack to be valid; the root has no contract route, so it answers
    // a JSON 404 like the functions' notFound instead of API Gateway's 500 for an integration-less method.
    const root = this.api.root.addMethod(
      'ANY',
      new MockIntegration({
        requestTemplates: { 'application/json': '{"statusCode": 404}' },
        integrationResponses: [
          { statusCode: '404', responseTemplates: { 'application/json': '{"reason": "No route for /"}' } },
        ],
      }),
      { methodResponses: [{ statusCode: '404' }] },
    )
    Validations.of(root).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'The root carries no route or data (a placeholder the REST API needs); every data route has the authorizer.',
    })

    const authorizerReserved = concurrency.authorizer ?? DEFAULT_CONCURRENCY.authorizer
    this.authorizerFunction = new HttpFunction(this, 'Authorizer', {
      functionId: 'auth/authorize',
      memorySize: 256,
      // One key look-up: far below API Gateway's 29 s, so a stuck call fails fast (503 AUTHORIZER_FAILURE) and does
      // not hold a slot of the reservation below.
      timeout: Duration.seconds(5),
      // Fail a stuck DynamoDB call well inside the 5 s, so the SDK's retry and the pass-through fallback (the function
      // authenticates the request itself) run before Lambda's timeout would answer 503 and hold a reserved slot.
      environment: { LOOM_DYNAMO_REQUEST_TIMEOUT_MS: '1000', LOOM_DYNAMO_MAX_ATTEMPTS: '2' },
      // Reserved so that streams and buffered functions together can never starve key checks (0: none).
      ...(authorizerReserved > 0 ? { reservedConcurrentExecutions: authorizerReserved } : {}),
    })
    this.authorizerFunction.bindTable({ table: props.table, accessMode: 'read' })
    // Only Authorization is an identity source: a missing optional project header would otherwise be a 401. The
    // short cache keeps revocation effective within seconds; functions re-check the project header themselves.
    const authorizer = new RequestAuthorizer(this, 'KeyAuthorizer', {
      handler: this.authorizerFunction,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(5),
    })

    this.addGatewayErrors()

    // exactOptionalPropertyTypes is stricter than aws-cdk-lib's own declarations; the construct is an IRestApi.
    const restApi = this.api as unknown as IRestApi
    authorizer._attachToApi(restApi)
    // Nested stacks get the authorizer by id only: attaching the construct to their imported API would bind it twice.
    const authorizerRef: IAuthorizer = {
      authorizerId: authorizer.authorizerId,
      authorizationType: AuthorizationType.CUSTOM,
    }
    const deployment = new Deployment(this, 'Deployment', { api: restApi })
    const byStack = new Map<string, FunctionEntry[]>()
    for (const entry of functions)
      byStack.set(routeStackIdOf(entry), [...(byStack.get(routeStackIdOf(entry)) ?? []), entry])
    // Path segments routes of several stacks share (`/v1`: inference and training) exist once, here.
    const sharedResources = new Map(
      sharedPrefixes(byStack).map((prefix) => [prefix, this.api.root.resourceForPath(prefix).resourceId]),
    )
    for (const [stackId, entries] of byStack) {
      const stack = new RouteStack(this, stackId, {
        entries,
        api: { restApiId: this.api.restApiId, rootResourceId: this.api.restApiRootResourceId },
        sharedResources,
        authorizer: authorizerRef,
        table: props.table,
        secrets: {
          namePrefix: props.secretNamePrefix ?? `loom/${stageName}/`,
          layerArn: props.secretsExtensionLayerArn,
        },
        concurrency,
      })
      this.routeStacks.set(stackId, stack)
      for (const [fnId, fn] of stack.functions) this.functions.set(fnId, fn)
    }
    warnOnReservations(this, functions, concurrency, authorizerReserved)

    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS })
    this.stage = new Stage(this, 'Stage', {
      deployment,
      stageName,
      tracingEnabled: true,
      // ERROR, not INFO: INFO writes ~10 lines per request to the execution log (about $1.50 per million requests of
      // ingestion, docs/costs.md) that the access log and X-Ray already cover.
      loggingLevel: MethodLoggingLevel.ERROR,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.custom(ACCESS_LOG_FORMAT),
      throttlingRateLimit: 1_000,
      throttlingBurstLimit: 2_000,
    })
    // API Gateway creates the execution log group itself, with no expiry; this sets its retention whether or not it
    // exists yet (a custom resource, because a log group created here would collide with one API Gateway made).
    const executionLogs = new LogRetention(this, 'ExecutionLogsRetention', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${stageName}`,
      retention: RetentionDays.ONE_MONTH,
    })
    acknowledgeLogRetentionProvider(this, executionLogs)

    if (props.waf !== undefined) {
      this.webAcl = new RateLimitAcl(this, 'RateLimit', {
        stage: this.stage,
        ...props.waf,
        blockedBody: gatewayBody('Rate limit reached for requests', 'RateLimitError', 429),
        metricPrefix: `loom-${stageName}`,
      })
    } else {
      this.webAcl = undefined
      Validations.of(this.stage).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason: 'WAF is opt-in (ApiStack prop `waf`, context loom:waf=true): a fixed monthly cost; see docs/costs.md.',
      })
    }

    this.addAlarms(props, functions, accessLogs, stageName)

    // Last, once every API definition of this stack and its route stacks exists (the hash itself is computed at synthesis).
    bindDeploymentToDefinition(deployment, this)

    // One API serves both families: tracing SDKs take the stage root, OpenAI-compatible SDKs the `/v1` prefix.
    // No trailing slash: SDKs append `/call/start` and the like, and `prod//call/start` would match no route.
    new CfnOutput(this, 'BaseUrl', {
      description: 'base_url (Weave trace server)',
      value: `https://${this.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${this.stage.stageName}`,
    })
    new CfnOutput(this, 'InferenceBaseUrl', {
      description: 'inference_base_url (OpenAI-compatible)',
      value: this.stage.urlForPath('/v1'),
    })
  }

  /**
   * Alarms on the stage's 5xx rate, the p99 latency of the routes that end within 29 s (long-running streams excluded:
   * their latency is their length) and, per long-running streaming function, the p99 duration approaching the
   * 15-minute cap. All notify one topic.
   */
  private addAlarms(
    props: ApiStackProps,
    functions: readonly FunctionEntry[],
    accessLogs: LogGroup,
    stageName: string,
  ): void {
    const alarmTopic = alarmTopicOf(this, props.alarmEmail, stageName)
    const alarmAction = new SnsAction(alarmTopic)
    // Every alarm: 2 of 3 five-minute periods over the threshold; no traffic is not an alarm.
    const alarm = (id: string, description: string, metric: IMetric, threshold: number) => {
      const created = new Alarm(this, id, {
        alarmDescription: `${description} (Loom ${stageName})`,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      })
      // OK actions too, so whoever was paged also learns when it is over.
      created.addAlarmAction(alarmAction)
      created.addOkAction(alarmAction)
      return created
    }
    // Rate, not count: 5XXError's Average is the share of requests answered 5xx.
    alarm(
      'ServerErrorRateAlarm',
      'Share of API requests answered 5xx',
      this.stage.metricServerError({ statistic: 'Average', period: Duration.minutes(5) }),
      props.serverErrorRateThreshold ?? 0.05,
    )
    // API Gateway's own Latency has one value per stage (per-method metrics cost ~$2 per method a month), so the
    // buffered routes' latency comes from the access log: every line except the long-running streams'. The streamed
    // tracing reads stay in: their functions end within 29 s like the buffered ones.
    const streamPaths = functions.filter((f) => f.longRunning).flatMap((f) => f.routes.map((r) => apiPath(r.path)))
    const bufferedLatency = new MetricFilter(this, 'BufferedLatencyFilter', {
      logGroup: accessLogs,
      metricNamespace: METRICS_NAMESPACE,
      metricName: 'BufferedLatency',
      filterPattern: FilterPattern.all(
        FilterPattern.exists('$.responseLatency'),
        ...streamPaths.map((path) => FilterPattern.stringValue('$.resourcePath', '!=', path)),
      ),
      metricValue: '$.responseLatency',
      dimensions: { ApiId: '$.apiId', Stage: '$.stage' },
      unit: Unit.MILLISECONDS,
    })
    alarm(
      'BufferedLatencyP99Alarm',
      'p99 latency of the buffered (non-streaming) routes',
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'BufferedLatency',
        dimensionsMap: { ApiId: this.api.restApiId, Stage: stageName },
        statistic: 'p99',
        period: Duration.minutes(5),
      }),
      props.p99LatencyThresholdMs ?? 5_000,
    ).node.addDependency(bufferedLatency)
    for (const entry of functions.filter((f) => f.longRunning)) {
      const fn = this.functions.get(entry.id)
      if (fn === undefined) continue
      alarm(
        `StreamDurationAlarm${fn.node.id}`,
        `p99 duration of ${entry.id} streams, near the 15-minute cap`,
        fn.metricDuration({ statistic: 'p99', period: Duration.minutes(5) }),
        props.streamDurationThresholdMs ?? 600_000,
      )
    }
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic the 5xx-rate, latency and stream-duration alarms notify',
      value: alarmTopic.topicArn,
    })
  }

  /**
   * The few answers API Gateway gives itself: a request without `Authorization` never reaches the authorizer (401), an
   * authorizer that crashed or timed out (500 by default), stage throttling (429). A gateway response has one body for
   * the whole API, so it carries each family's error key at once: `error` (OpenAI / vLLM), `reason` (Weave) and
   * `detail` (training), each client reading its own. Every other error comes from the functions, in their family's
   * shape (the authorizer never denies; see shared/auth/authorizer.ts).
   */
  private addGatewayErrors(): void {
    const body = gatewayBody
    const answers = [
      {
        id: 'Unauthorized',
        type: ResponseType.UNAUTHORIZED,
        status: 401,
        body: body('Authentication failed', 'AuthenticationError', 401),
      },
      {
        id: 'AuthorizerFailure',
        type: ResponseType.AUTHORIZER_FAILURE,
        status: 503,
        body: body('The service is temporarily unavailable, please try again later', 'ServiceUnavailableError', 503),
        retryAfter: true,
      },
      {
        // API Gateway's answer for a path or method no resource serves is a 403 "Missing Authentication Token" in its
        // own shape; the functions answer an unknown route 404 in their family's shape, and so does the gateway.
        id: 'NoRoute',
        type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
        status: 404,
        body: body('No route for this method and path', 'Not Found', 404),
      },
      {
        id: 'Throttled',
        type: ResponseType.THROTTLED,
        status: 429,
        body: body('Rate limit reached for requests', 'RateLimitError', 429),
        retryAfter: true,
      },
      {
        // A body past API Gateway's 10 MB (smaller ones past Lambda's 6 MB invoke limit end in DEFAULT_5XX).
        id: 'RequestTooLarge',
        type: ResponseType.REQUEST_TOO_LARGE,
        status: 413,
        body: body('Request too large', 'PayloadTooLargeError', 413),
      },
      {
        // A buffered function still running at API Gateway's 29 s integration limit.
        id: 'IntegrationTimeout',
        type: ResponseType.INTEGRATION_TIMEOUT,
        status: 504,
        body: body('The request timed out, please try again later', 'ServiceUnavailableError', 504),
        retryAfter: true,
      },
    ]
    for (const answer of answers) {
      this.api.addGatewayResponse(answer.id, {
        type: answer.type,
        statusCode: String(answer.status),
        responseHeaders: answer.retryAfter ? { 'Retry-After': "'1'" } : {},
        templates: { 'application/json': answer.body },
      })
    }
    // Every other answer API Gateway generates itself (a Lambda throttled at its reservation, an invoke failure, a
    // payload over Lambda's limit, a WAF block without its own body): its status kept, in the same combined shape.
    for (const [id, type, errorType, code] of [
      ['Default4xx', ResponseType.DEFAULT_4XX, 'BadRequestError', 400],
      ['Default5xx', ResponseType.DEFAULT_5XX, 'InternalServerError', 500],
    ] as const) {
      this.api.addGatewayResponse(id, { type, templates: { 'application/json': gatewayContextBody(errorType, code) } })
    }
  }
}
