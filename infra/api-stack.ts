import {
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
  type IAuthorizer,
  IdentitySource,
  type IRestApi,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  RequestAuthorizer,
  ResponseTransferMode,
  ResponseType,
  RestApi,
  Stage,
} from 'aws-cdk-lib/aws-apigateway'
import { Alarm, ComparisonOperator, type IMetric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch'
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import { Key } from 'aws-cdk-lib/aws-kms'
import { ParamsAndSecretsLayerVersion, ParamsAndSecretsVersions } from 'aws-cdk-lib/aws-lambda'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import { Topic } from 'aws-cdk-lib/aws-sns'
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions'
import type { Construct } from 'constructs'
import { FUNCTIONS, type FunctionEntry } from '../functions/manifest.js'
import { HttpFunction } from './constructs/http-function.js'

/** Props of the API stack. */
export type ApiStackProps = StackProps & {
  table: ITable
  /**
   * Stage name of the deployment.
   * @default 'prod'
   */
  stageName?: string
  /**
   * Secrets Manager name prefix whose secrets the chat function may read (catalog `secret:<id>` references).
   * @default 'loom/'
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
   * Stage p99 latency (ms, 5-minute windows) that raises the latency alarm.
   * @default 10_000
   */
  p99LatencyThresholdMs?: number
  /**
   * Address subscribed by email to the alarm topic (AWS sends a confirmation message first).
   * @default - no subscription; subscribe to the `AlarmTopicArn` output yourself
   */
  alarmEmail?: string
  /**
   * The functions to deploy, one Lambda each.
   * @default FUNCTIONS (functions/manifest.ts)
   */
  functions?: readonly FunctionEntry[]
}

/** Functions that resolve `secret:<id>` credential references (shared/inference/credentials.ts). */
const SECRET_READERS = new Set(['inference/create-chat-completion'])

type FamilyProps = {
  family: FunctionEntry['family']
  functions: readonly FunctionEntry[]
  api: { restApiId: string; rootResourceId: string }
  authorizer: IAuthorizer
  table: ITable
  secrets: { namePrefix: string; layerArn: string | undefined }
}

/** The functions and routes of one route family, in a nested stack to stay far below CloudFormation's 500 resources. */
export class FamilyStack extends NestedStack {
  /** The family's functions by manifest id. */
  readonly functions = new Map<string, HttpFunction>()

  constructor(scope: Construct, id: string, props: FamilyProps) {
    super(scope, id)
    const api: IRestApi = RestApi.fromRestApiAttributes(this, 'Api', {
      restApiId: props.api.restApiId,
      rootResourceId: props.api.rootResourceId,
    })
    for (const entry of props.functions.filter((f) => f.family === props.family)) {
      const name = entry.id.split('/').at(-1) ?? entry.id
      const fn = new HttpFunction(this, pascal(name), {
        functionId: entry.id,
        ...(entry.stream ? { timeout: Duration.minutes(15), memorySize: 1024 } : {}),
        ...(SECRET_READERS.has(entry.id)
          ? {
              paramsAndSecrets:
                props.secrets.layerArn === undefined
                  ? ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103)
                  : ParamsAndSecretsLayerVersion.fromVersionArn(props.secrets.layerArn),
            }
          : {}),
      })
      if (SECRET_READERS.has(entry.id)) grantSecrets(fn, props.secrets.namePrefix)
      // Every authenticated function resolves keys itself when invoked directly, so it reads the table at least.
      if (entry.access !== 'none' || entry.auth)
        fn.bindTable({ table: props.table, accessMode: entry.access === 'write' ? 'write' : 'read' })
      const integration = new LambdaIntegration(fn, {
        proxy: true,
        ...(entry.stream ? { responseTransferMode: ResponseTransferMode.STREAM, timeout: Duration.minutes(15) } : {}),
      })
      for (const route of entry.routes) {
        const resource = api.root.resourceForPath(route.path.replace(/:([A-Za-z_]+)/g, '{$1}'))
        const method = resource.addMethod(
          route.method,
          integration,
          entry.auth ? { authorizer: props.authorizer, authorizationType: AuthorizationType.CUSTOM } : {},
        )
        if (!entry.auth)
          Validations.of(method).acknowledge({
            id: 'AwsSolutions-APIG4',
            reason: 'Public by contract (health, server info, OpenAPI document): the manifest marks it auth: false.',
          })
      }
      this.functions.set(entry.id, fn)
    }
  }
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

/** GetSecretValue on the prefix only; secret ARNs end in a random suffix, so even one secret needs a wildcard. */
function grantSecrets(fn: HttpFunction, namePrefix: string): void {
  fn.executionRole.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['secretsmanager:GetSecretValue'],
      resources: [
        Stack.of(fn).formatArn({
          service: 'secretsmanager',
          resource: 'secret',
          resourceName: `${namePrefix}*`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
    }),
  )
  Validations.of(fn.executionRole).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${namePrefix}*]`,
    reason: 'Scoped to the configured secret-name prefix; secret ARNs carry a random suffix.',
  })
}

/**
 * The alarms' SNS topic: SSL-only and encrypted with its own rotating KMS key (AwsSolutions SNS2/SNS3, KMS5), which
 * CloudWatch may use; the AWS managed `alias/aws/sns` key would not let CloudWatch publish to the topic.
 */
function alarmTopicOf(stack: Stack, email: string | undefined): Topic {
  const key = new Key(stack, 'AlarmTopicKey', {
    description: 'Encrypts the Loom alarm topic',
    enableKeyRotation: true,
    // Encrypts only notifications in flight, nothing stored: no reason to keep it after the stack.
    removalPolicy: RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
  })
  key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*')
  const topic = new Topic(stack, 'AlarmTopic', { displayName: 'Loom alarms', masterKey: key, enforceSSL: true })
  if (email !== undefined) topic.addSubscription(new EmailSubscription(email))
  return topic
}

function pascal(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase())
}

/**
 * One REST API (REST, not HTTP API, because chat completions stream), the shared REQUEST authorizer, and one nested
 * stack per route family holding one Lambda per endpoint.
 */
export class ApiStack extends Stack {
  readonly api: RestApi
  readonly stage: Stage
  readonly families: Partial<Record<FunctionEntry['family'], FamilyStack>> = {}

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props)
    this.api = new RestApi(this, 'Api', {
      restApiName: 'loom',
      deploy: false,
      cloudWatchRole: true,
      // `file/content` answers raw bytes, which the function base64-encodes (isBase64Encoded). API Gateway decodes
      // them only when the request's first Accept type is a binary media type; the Weave SDKs send `Accept: */*`, and
      // `file/create` uploads multipart bodies that must not be read as UTF-8, so every type counts as binary. Text
      // responses (isBase64Encoded false) pass unchanged. Cost: request bodies reach Lambda base64-encoded, so
      // Lambda's 6 MB invoke limit caps a deployed request body near 4.4 MB (below LOOM_MAX_BODY_BYTES' 5 MiB).
      binaryMediaTypes: ['*/*'],
    })
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in each function against the same zod schemas, answering in the family contract ' +
        "shape (vLLM 400, pydantic 422); API Gateway's validator would answer in its own shape.",
    })
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: "API Gateway's account-level logging role; AWS maintains this policy for exactly that service.",
    })
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

    const authorizerFn = new HttpFunction(this, 'Authorizer', { functionId: 'auth/authorize', memorySize: 256 })
    authorizerFn.bindTable({ table: props.table, accessMode: 'read' })
    // Only Authorization is an identity source: a missing optional project header would otherwise be a 401. The
    // short cache keeps revocation effective within seconds; functions re-check the project header themselves.
    const authorizer = new RequestAuthorizer(this, 'KeyAuthorizer', {
      handler: authorizerFn,
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
    const functions = props.functions ?? FUNCTIONS
    const deployment = new Deployment(this, 'Deployment', { api: restApi })
    for (const family of ['meta', 'inference', 'training', 'tracing'] as const) {
      if (!functions.some((f) => f.family === family)) continue
      const stack = new FamilyStack(this, `${pascal(family)}Routes`, {
        family,
        functions,
        api: { restApiId: this.api.restApiId, rootResourceId: this.api.restApiRootResourceId },
        authorizer: authorizerRef,
        table: props.table,
        secrets: {
          namePrefix: props.secretNamePrefix ?? 'loom/',
          layerArn: props.secretsExtensionLayerArn,
        },
      })
      this.families[family] = stack
    }
    bindDeploymentToDefinition(deployment, this)
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS })
    this.stage = new Stage(this, 'Stage', {
      deployment,
      stageName: props.stageName ?? 'prod',
      tracingEnabled: true,
      loggingLevel: MethodLoggingLevel.INFO,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      throttlingRateLimit: 1_000,
      throttlingBurstLimit: 2_000,
    })
    Validations.of(this.stage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason: 'WAF is an account-level choice with its own cost; attach a web ACL to the stage where required.',
    })

    const alarmTopic = alarmTopicOf(this, props.alarmEmail)
    const alarmAction = new SnsAction(alarmTopic)
    // Both alarms: 2 of 3 five-minute periods over the threshold; no traffic is not an alarm.
    const alarm = (id: string, description: string, metric: IMetric, threshold: number) =>
      new Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      })
    // Rate, not count: 5XXError's Average is the share of requests answered 5xx.
    const serverErrors = alarm(
      'ServerErrorRateAlarm',
      'Share of API requests answered 5xx',
      this.stage.metricServerError({ statistic: 'Average', period: Duration.minutes(5) }),
      props.serverErrorRateThreshold ?? 0.05,
    )
    // Streamed chat completions count with their full duration, so the default leaves room for long answers.
    const latency = alarm(
      'LatencyP99Alarm',
      'API p99 latency',
      this.stage.metricLatency({ statistic: 'p99', period: Duration.minutes(5) }),
      props.p99LatencyThresholdMs ?? 10_000,
    )
    // OK actions too, so whoever was paged also learns when it is over.
    for (const alarm of [serverErrors, latency]) {
      alarm.addAlarmAction(alarmAction)
      alarm.addOkAction(alarmAction)
    }
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic the 5xx-rate and p99-latency alarms notify',
      value: alarmTopic.topicArn,
    })

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
   * The few answers API Gateway gives itself: a request without `Authorization` never reaches the authorizer (401), an
   * authorizer that crashed or timed out (500 by default), stage throttling (429). A gateway response has one body for
   * the whole API, so it carries each family's error key at once: `error` (OpenAI / vLLM), `reason` (Weave) and
   * `detail` (training), each client reading its own. Every other error comes from the functions, in their family's
   * shape (the authorizer never denies; see shared/auth/authorizer.ts).
   */
  private addGatewayErrors(): void {
    const body = (message: string, type: string, code: number) =>
      JSON.stringify({ error: { message, type, param: null, code }, reason: message, detail: message })
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
        id: 'Throttled',
        type: ResponseType.THROTTLED,
        status: 429,
        body: body('Rate limit reached for requests', 'RateLimitError', 429),
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
  }
}
