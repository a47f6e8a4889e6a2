import { Annotations, CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib'
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
  RestApi,
  Stage,
} from 'aws-cdk-lib/aws-apigateway'
import { LogGroup, LogRetention, RetentionDays } from 'aws-cdk-lib/aws-logs'
import type { Construct } from 'constructs'
import { FUNCTIONS, type FunctionEntry } from '../functions/manifest.js'
import type { ApiStackProps } from './api-stack-props.js'
import { addApiAlarms } from './constructs/api-alarms.js'
import { bindDeploymentToDefinition } from './constructs/deployment-binding.js'
import { addGatewayResponses, gatewayBody } from './constructs/gateway-responses.js'
import { HttpFunction } from './constructs/http-function.js'
import { RateLimitAcl } from './constructs/rate-limit-acl.js'
import {
  type ConcurrencySettings,
  DEFAULT_CONCURRENCY,
  RouteStack,
  reservedConcurrencyOf,
  routeStackIdOf,
  sharedPrefixes,
} from './route-stack.js'

export type { ApiStackProps }

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

    addGatewayResponses(this.api)

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

    addApiAlarms(this, {
      stage: this.stage,
      restApiId: this.api.restApiId,
      stageName,
      accessLogs,
      functions,
      functionsById: this.functions,
      alarmEmail: props.alarmEmail,
      serverErrorRateThreshold: props.serverErrorRateThreshold,
      p99LatencyThresholdMs: props.p99LatencyThresholdMs,
      streamDurationThresholdMs: props.streamDurationThresholdMs,
    })

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
}
