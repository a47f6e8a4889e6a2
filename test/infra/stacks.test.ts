import { type CfnResource, type NestedStack, Stack } from 'aws-cdk-lib'
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions'
import { Resource } from 'aws-cdk-lib/aws-apigateway'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import type { CfnPolicy } from 'aws-cdk-lib/aws-iam'
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda'
import { describe, expect, it } from 'vitest'
import { FUNCTIONS } from '#functions/manifest'
import { secretsExtension } from '#shared/config'
import { GLOBAL_INDEXES } from '#shared/db/table'
import { ApiStack, type ApiStackProps } from '../../infra/api-stack.js'
import {
  ADMIN_LEADING_KEYS,
  type HttpFunction,
  LIMITER_LEADING_KEYS,
  LIMITER_WRITE_ACTIONS,
  TABLE_WRITE_ACTIONS,
} from '../../infra/constructs/http-function.js'
import { DataStack } from '../../infra/data-stack.js'
import { apiPath } from '../../infra/route-stack.js'
import { deploySettings } from '../../infra/settings.js'
import { SAMPLE_FUNCTIONS, testApp } from '../support/cdk.js'

function synth(props: Omit<ApiStackProps, 'table'> = {}) {
  const app = testApp()
  const data = new DataStack(app, 'Data', { production: true })
  const api = new ApiStack(app, 'Api', { table: data.table as unknown as ITable, ...props })
  return { data, api }
}

/**
 * An app of the sample functions (test/support/cdk.ts: one per route stack and kind of route) with `props`: for the
 * effect of a prop, which does not depend on how many functions there are, at a third of the whole manifest's synth.
 */
function synthSample(props: Omit<ApiStackProps, 'table'> = {}) {
  return synth({ functions: SAMPLE_FUNCTIONS, ...props })
}

const { data, api } = synth()
const families = [...api.routeStacks.entries()] as [string, NestedStack][]

const templates = new Map<Stack, Template>()
function templateOf(stack: Stack): Template {
  const cached = templates.get(stack) ?? Template.fromStack(stack)
  templates.set(stack, cached)
  return cached
}

type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown }

function functionOf(apiStack: ApiStack, id: string): HttpFunction {
  const fn = apiStack.functions.get(id)
  if (fn === undefined) throw new Error(`no function ${id}`)
  return fn
}

/** The statements of the function's own role policy, as synthesised. */
function statementsOf(fn: HttpFunction): Statement[] {
  const stack = Stack.of(fn)
  const policy = fn.executionRole.node.findChild('DefaultPolicy').node.defaultChild as CfnPolicy
  const resource = templateOf(stack).toJSON().Resources[stack.getLogicalId(policy)]
  return resource.Properties.PolicyDocument.Statement as Statement[]
}

function actionsOf(fn: HttpFunction): string[] {
  return statementsOf(fn).flatMap((s) => [s.Action].flat())
}

const WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']

describe('DataStack', () => {
  it('creates the table from the shared definition with every index, PITR and deletion protection', () => {
    const template = Template.fromStack(data)
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) =>
        Match.objectLike({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
        }),
      ),
      Replicas: [
        Match.objectLike({
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        }),
      ],
    })
    template.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Retain' })
    template.hasOutput('TableName', { Value: { Ref: Match.stringLikeRegexp('^Table') } })
  })

  it('projects each index as the shared definition says, or ALL on a table deployed before (loom:allProjectedIndexes)', () => {
    const projections = (stack: Stack) => {
      const resources = Template.fromStack(stack).findResources('AWS::DynamoDB::GlobalTable')
      const table = Object.values(resources)[0] as {
        Properties: { GlobalSecondaryIndexes: { IndexName: string; Projection: unknown }[] }
      }
      return table.Properties.GlobalSecondaryIndexes.map((i) => [i.IndexName, i.Projection])
    }
    expect(projections(data)).toEqual(
      GLOBAL_INDEXES.map((index) => [
        index.indexName,
        index.projection.type === 'INCLUDE'
          ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection.attributes] }
          : { ProjectionType: index.projection.type },
      ]),
    )
    // CloudFormation cannot change an index's projection in place: an existing table keeps ALL, same names and keys.
    const legacy = new DataStack(testApp(), 'Legacy', { production: true, allProjectedIndexes: true })
    expect(projections(legacy)).toEqual(GLOBAL_INDEXES.map((index) => [index.indexName, { ProjectionType: 'ALL' }]))
  })
})

describe('ApiStack', () => {
  it('creates each API path once across its nested stacks, so no two stacks create the same resource', () => {
    // Prepare: every API Gateway resource the app creates, with its stack (imported parents create nothing).
    const created = api.node
      .findAll()
      .filter((c): c is Resource => c instanceof Resource)
      .map((r) => ({ path: r.path, stack: Stack.of(r).node.id }))

    // Assess: API Gateway refuses a second resource with the same parent and path part, so a path created by two
    // stacks deployed in parallel (inference and training both under /v1) fails the first `cdk deploy`.
    const paths = created.map((r) => r.path)
    expect(paths.filter((p, i) => paths.indexOf(p) !== i)).toEqual([])
    expect(created.find((r) => r.path === '/v1')?.stack).toBe('Api')
    const routes = new Set(FUNCTIONS.flatMap((f) => f.routes.map((r) => apiPath(r.path))))
    // The API root itself (`GET /`) is the RestApi's own root resource, created with the API.
    for (const route of [...routes].filter((r) => r !== '/')) expect(paths).toContain(route)
  })

  it('answers the API root with a JSON 404 from a mock integration rather than an integration-less 500', () => {
    Template.fromStack(api).hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'ANY',
      Integration: Match.objectLike({
        Type: 'MOCK',
        IntegrationResponses: [Match.objectLike({ StatusCode: '404' })],
      }),
    })
  })

  it("answers API Gateway's own errors (401, authorizer failure, throttling, unknown route, too large, timeout, the rest) with every family's error key", () => {
    // Prepare
    const responses = Object.values(Template.fromStack(api).findResources('AWS::ApiGateway::GatewayResponse')).map(
      (r) => r.Properties as { ResponseType: string; StatusCode: string; ResponseTemplates: Record<string, string> },
    )
    const byType = new Map(responses.map((r) => [r.ResponseType, r]))

    // Assess: one body per API, read by the OpenAI SDK (`error`), Weave (`reason`) and training clients (`detail`).
    for (const [type, status, errorType] of [
      ['UNAUTHORIZED', '401', 'AuthenticationError'],
      ['AUTHORIZER_FAILURE', '503', 'ServiceUnavailableError'],
      ['THROTTLED', '429', 'RateLimitError'],
      // A path or method no resource serves: API Gateway's own answer is a 403 "Missing Authentication Token".
      ['MISSING_AUTHENTICATION_TOKEN', '404', 'Not Found'],
      ['REQUEST_TOO_LARGE', '413', 'PayloadTooLargeError'],
      ['INTEGRATION_TIMEOUT', '504', 'ServiceUnavailableError'],
    ] as const) {
      const response = byType.get(type)
      expect(response?.StatusCode).toBe(status)
      const body = JSON.parse(response?.ResponseTemplates['application/json'] ?? '{}')
      expect(body.error).toMatchObject({ type: errorType, code: Number(status), param: null })
      expect(body.reason).toBe(body.error.message)
      expect(body.detail).toBe(body.error.message)
    }
    // The catch-alls keep API Gateway's status and carry its message (a JSON string in the template) under each key.
    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX']) {
      const response = byType.get(type)
      expect(response?.StatusCode).toBeUndefined()
      const template = response?.ResponseTemplates['application/json'] ?? ''
      const body = JSON.parse(template.replaceAll('$context.error.messageString', '"Internal server error"'))
      expect([body.error.message, body.reason, body.detail]).toEqual(Array(3).fill('Internal server error'))
    }
  })

  it('deploys one arm64 nodejs22.x Lambda per manifest function', () => {
    const count = families.reduce(
      (sum, [, stack]) => sum + Object.keys(Template.fromStack(stack).findResources('AWS::Lambda::Function')).length,
      0,
    )
    expect(count).toBe(FUNCTIONS.length)
    for (const [, stack] of families) {
      const fns = Template.fromStack(stack).findResources('AWS::Lambda::Function')
      for (const fn of Object.values(fns)) {
        expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] })
      }
    }
  })

  it("sets each function's manifest id as LOOM_FUNCTION_ID and leaves source maps off (cold-start cost)", () => {
    for (const entry of FUNCTIONS) {
      // Act
      const fn = functionOf(api, entry.id)
      const resource = templateOf(Stack.of(fn)).toJSON().Resources[
        Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnResource)
      ]

      // Assess
      expect(resource.Properties.Environment.Variables.LOOM_FUNCTION_ID, entry.id).toBe(entry.id)
      expect(resource.Properties.Environment.Variables.NODE_OPTIONS, entry.id).toBeUndefined()
    }
  })

  it('wires every route, with the REQUEST authorizer on every route except public ones', () => {
    for (const entry of FUNCTIONS) {
      const template = templateOf(Stack.of(functionOf(api, entry.id)))
      for (const route of entry.routes) {
        template.hasResourceProperties('AWS::ApiGateway::Method', {
          HttpMethod: route.method,
          AuthorizationType: entry.auth ? 'CUSTOM' : 'NONE',
          ...(entry.auth ? { AuthorizerId: Match.anyValue() } : {}),
        })
      }
    }
    Template.fromStack(api).hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 5,
    })
  })

  it("gives the authorizer DynamoDB timeouts whose retries fit inside its own 5 s, so its fallback runs before Lambda's timeout", () => {
    const authorizer = api.authorizerFunction.node.defaultChild as CfnFunction
    const { Timeout, Environment } = templateOf(api).toJSON().Resources[api.getLogicalId(authorizer)].Properties
    const env = Environment.Variables as Record<string, string>
    const worst = Number(env.LOOM_DYNAMO_MAX_ATTEMPTS) * Number(env.LOOM_DYNAMO_REQUEST_TIMEOUT_MS)
    expect(Timeout).toBe(5)
    expect(worst).toBeLessThanOrEqual(2_000)
  })

  it('streams the answers of the functions declared stream, with 15 minutes and 1024 MB only for long-running ones', () => {
    // Prepare: the proxy integrations of a function's methods, and the function's own settings.
    const integrationsOf = (fn: HttpFunction) => {
      const logicalId = Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnResource)
      return Object.values(templateOf(Stack.of(fn)).findResources('AWS::ApiGateway::Method'))
        .map((m) => m.Properties.Integration)
        .filter((i) => JSON.stringify(i.Uri).includes(logicalId))
    }
    const settingsOf = (fn: HttpFunction) =>
      templateOf(Stack.of(fn)).toJSON().Resources[Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnResource)]
        .Properties as { MemorySize: number; Timeout: number }

    // Assess: the reads whose answers may pass Lambda's 6 MB stream with the buffered functions' settings.
    expect(FUNCTIONS.filter((f) => f.stream && !f.longRunning).map((f) => f.id)).toEqual([
      'training/get-model-metrics',
      'tracing/read-call',
      'tracing/read-obj',
      'tracing/read-refs-batch',
      'tracing/query-objs',
      'tracing/query-feedback',
      'tracing/query-table',
      'tracing/read-file-content',
    ])
    for (const entry of FUNCTIONS) {
      const fn = functionOf(api, entry.id)
      const integrations = integrationsOf(fn)
      expect(integrations, entry.id).toHaveLength(entry.routes.length)
      for (const integration of integrations) {
        expect(integration, entry.id).toMatchObject({ Type: 'AWS_PROXY' })
        expect(integration.ResponseTransferMode, entry.id).toBe(entry.stream ? 'STREAM' : undefined)
        expect(integration.TimeoutInMillis, entry.id).toBe(entry.longRunning ? 900_000 : undefined)
        expect(JSON.stringify(integration.Uri).includes('response-streaming-invocations'), entry.id).toBe(
          entry.stream === true,
        )
      }
      expect(settingsOf(fn), entry.id).toMatchObject(
        entry.longRunning ? { MemorySize: 1024, Timeout: 900 } : { MemorySize: 512, Timeout: 29 },
      )
    }
  })

  it("keeps every stack under 300 of CloudFormation's 500 resources", () => {
    for (const stack of [data, api, ...families.map(([, s]) => s)]) {
      const resources = Object.keys(templateOf(stack).toJSON().Resources ?? {}).length
      expect(resources, stack.node.path).toBeLessThan(300)
    }
  })

  it('splits the tracing family into areas by route, and puts a function of no known area in its family stack', () => {
    // Prepare: a tracing function on a route no area lists (the shape of a new endpoint, e.g. OTel ingest).
    const readCall = FUNCTIONS.find((f) => f.id === 'tracing/read-call')
    if (readCall === undefined) throw new Error('no tracing/read-call')
    const unlisted = { ...readCall, routes: [{ method: 'POST' as const, path: '/brand_new/read' }] }

    // Act: the sample functions, so the other tracing areas exist beside the family stack.
    const custom = synthSample({ functions: [...SAMPLE_FUNCTIONS.filter((f) => f.id !== readCall.id), unlisted] }).api

    // Assess
    expect(Stack.of(functionOf(api, 'tracing/start-call')).node.id).toBe('TracingCallsRoutes')
    expect(Stack.of(functionOf(api, 'tracing/read-obj')).node.id).toBe('TracingObjectsRoutes')
    expect(Stack.of(functionOf(api, 'tracing/create-feedback')).node.id).toBe('TracingFeedbackRoutes')
    expect(Stack.of(functionOf(api, 'inference/list-models')).node.id).toBe('InferenceRoutes')
    expect(Stack.of(functionOf(custom, 'tracing/read-call')).node.id).toBe('TracingRoutes')
  })
})

describe('least privilege', () => {
  it("gives read-only functions no DynamoDB write action beyond the limiter's, on its keys only", () => {
    const readers = FUNCTIONS.filter((f) => f.access === 'read')
    expect(readers.length).toBeGreaterThan(10)
    for (const entry of readers) {
      // Act
      const statements = statementsOf(functionOf(api, entry.id))
      const writing = statements.filter((s) => [s.Action].flat().some((a) => WRITES.includes(a)))

      // Assess: the only writes are the rate limiter's, conditioned on its partition keys (iam-policy-proxy.test.ts
      // runs each function under this policy).
      expect(actionsOf(functionOf(api, entry.id)), entry.id).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']),
      )
      expect(writing, entry.id).toEqual([
        expect.objectContaining({
          Action: LIMITER_WRITE_ACTIONS,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': LIMITER_LEADING_KEYS } },
        }),
      ])
      expect(JSON.stringify(writing[0]?.Resource), entry.id).not.toContain('/index/')
    }
  })

  it('gives writing functions the writes, and no function Scan, transactions or a table wildcard', () => {
    for (const entry of FUNCTIONS.filter((f) => f.access === 'write')) {
      expect(actionsOf(functionOf(api, entry.id)), entry.id).toEqual(expect.arrayContaining(WRITES))
    }
    for (const entry of FUNCTIONS) {
      const statements = statementsOf(functionOf(api, entry.id))
      const actions = statements.flatMap((s) => [s.Action].flat())
      expect(
        actions.filter((a) => a === 'dynamodb:Scan' || a.startsWith('dynamodb:Transact')),
        entry.id,
      ).toEqual([])
      expect(
        actions.filter((a) => a.endsWith('*')),
        entry.id,
      ).toEqual([])
      // Indexes are named one by one: the only wildcard resource is X-Ray's (and the secret prefix).
      expect(JSON.stringify(statements), entry.id).not.toContain('/index/*')
    }
  })

  it('grants writes on the table only and denies them on key records, memberships and the catalog', () => {
    const writers = FUNCTIONS.filter((f) => f.access === 'write')
    expect(writers.length).toBeGreaterThan(10)
    for (const entry of writers) {
      // Act
      const statements = statementsOf(functionOf(api, entry.id)) as (Statement & { Effect: string })[]
      const writing = statements.filter((s) => [s.Action].flat().some((a) => WRITES.includes(a)))

      // Assess: one Allow and one Deny of the same writes, both on the table itself (an index is written through it).
      expect(writing, entry.id).toEqual([
        expect.objectContaining({ Effect: 'Allow', Action: TABLE_WRITE_ACTIONS }),
        expect.objectContaining({
          Effect: 'Deny',
          Action: TABLE_WRITE_ACTIONS,
          Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ADMIN_LEADING_KEYS } },
        }),
      ])
      for (const statement of writing) expect(JSON.stringify(statement.Resource), entry.id).not.toContain('/index/')
    }
    expect(ADMIN_LEADING_KEYS).toEqual(['APIKEY#*', 'USER#*', 'MODELS', 'MARKER#*'])
  })

  it('grants no function or authorizer DescribeTable, which only the local scripts call', () => {
    for (const fn of [...api.functions.values(), api.authorizerFunction]) {
      expect(actionsOf(fn), fn.functionId).not.toContain('dynamodb:DescribeTable')
    }
  })

  it("writes logs only to the function's own log group, without the AWS managed basic-execution policy", () => {
    // Act
    const fn = functionOf(api, 'tracing/read-obj')
    const logs = statementsOf(fn).filter((s) => [s.Action].flat().some((a) => a.startsWith('logs:')))

    // Assess
    expect(logs).toEqual([
      {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [Stack.of(fn).getLogicalId(fn.logGroup.node.defaultChild as CfnPolicy), 'Arn'] },
      },
    ])
    const roles = templateOf(Stack.of(fn)).findResources('AWS::IAM::Role')
    expect(JSON.stringify(roles)).not.toContain('AWSLambdaBasicExecutionRole')
  })
})

describe('upstream credentials in Secrets Manager', () => {
  const chat = 'inference/create-chat-completion'

  it('lets only the chat function read secrets, under the per-stage loom/<stage>/ prefix, with the extension layer on the port the code calls', () => {
    // Act
    const fn = functionOf(api, chat)
    const template = templateOf(Stack.of(fn))
    const secretStatements = statementsOf(fn).filter((s) => [s.Action].flat().some((a) => a.startsWith('secrets')))

    // Assess
    expect(secretStatements).toEqual([
      expect.objectContaining({
        Action: 'secretsmanager:GetSecretValue',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':secretsmanager:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':secret:loom/prod/*',
            ],
          ],
        },
      }),
    ])
    template.hasResourceProperties('AWS::Lambda::Function', {
      Layers: [{ 'Fn::FindInMap': [Match.anyValue(), { Ref: 'AWS::Region' }, Match.stringLikeRegexp('arm64')] }],
      Environment: {
        Variables: Match.objectLike({ PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(secretsExtension().port) }),
      },
    })
    for (const entry of FUNCTIONS.filter((f) => f.id !== chat)) {
      expect(
        actionsOf(functionOf(api, entry.id)).filter((a) => a.startsWith('secretsmanager:')),
        entry.id,
      ).toEqual([])
    }
  })

  it('takes the secret prefix and the layer ARN from props', () => {
    // Prepare
    const layerArn = 'arn:aws:lambda:eu-west-1:133256977650:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:12'
    const custom = synthSample({ secretNamePrefix: 'team-a/', secretsExtensionLayerArn: layerArn }).api

    // Act
    const fn = functionOf(custom, chat)
    const resources = JSON.stringify(statementsOf(fn).map((s) => s.Resource))

    // Assess
    expect(resources).toContain(':secret:team-a/*')
    expect(resources).not.toContain(':secret:loom/')
    Template.fromStack(Stack.of(fn)).hasResourceProperties('AWS::Lambda::Function', { Layers: [layerArn] })
  })
})

describe('REST API settings', () => {
  it('treats every media type as binary, so file/create uploads reach the function as bytes', () => {
    Template.fromStack(api).hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['*/*'] })
  })

  it('logs access as JSON to a log group, traces and throttles the stage', () => {
    Template.fromStack(api).hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      TracingEnabled: true,
      AccessLogSetting: {
        DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^AccessLogs'), 'Arn'] },
        Format: Match.stringLikeRegexp('"requestId":"\\$context.requestId"'),
      },
      MethodSettings: [
        Match.objectLike({ LoggingLevel: 'ERROR', ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 }),
      ],
    })
  })

  it('logs who called and why API Gateway answered a 4xx or 5xx itself, not the IAM identity fields', () => {
    // Act
    const stage = Object.values(Template.fromStack(api).findResources('AWS::ApiGateway::Stage'))[0]?.Properties
    const fields = JSON.parse(
      (stage.AccessLogSetting.Format as string).replace('$context.responseLatency', '0'),
    ) as Record<string, unknown>

    // Assess: behind a Lambda authorizer `$context.identity.user` and `caller` are always `-`.
    expect(fields).toMatchObject({
      principalId: '$context.authorizer.principalId',
      errorType: '$context.error.responseType',
      integrationStatus: '$context.integrationStatus',
    })
    expect(Object.values(fields)).not.toContain('$context.identity.user')
    expect(Object.values(fields)).not.toContain('$context.identity.caller')
  })

  it("sets the region's API Gateway logging role by default, and leaves it alone with loom:apiGatewayCloudWatchRole=false", () => {
    // Prepare: the stacks as infra/app.ts builds them from context.
    const withContext = (context: Record<string, unknown>) => {
      const app = testApp({ context })
      const table = new DataStack(app, 'Data', { production: true }).table as unknown as ITable
      return Template.fromStack(
        new ApiStack(app, 'Api', { table, ...deploySettings(app.node).api, functions: SAMPLE_FUNCTIONS }),
      )
    }
    const pushPolicy = Match.arrayWith([
      Match.objectLike({
        'Fn::Join': Match.arrayWith([
          Match.arrayWith([':iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs']),
        ]),
      }),
    ])

    // Act
    const byDefault = withContext({})
    const managedElsewhere = withContext({ 'loom:apiGatewayCloudWatchRole': 'false' })

    // Assess
    byDefault.resourceCountIs('AWS::ApiGateway::Account', 1)
    byDefault.hasResource('AWS::ApiGateway::Account', { DeletionPolicy: 'Retain' })
    byDefault.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: pushPolicy })
    managedElsewhere.resourceCountIs('AWS::ApiGateway::Account', 0)
    expect(managedElsewhere.findResources('AWS::IAM::Role', { Properties: { ManagedPolicyArns: pushPolicy } })).toEqual(
      {},
    )
    // The stage logs as before: to the role the account already has.
    managedElsewhere.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: Match.objectLike({ Format: Match.anyValue() }),
      MethodSettings: [Match.objectLike({ LoggingLevel: 'ERROR' })],
    })
  })

  it('uses a Regional endpoint, whose streams may idle 5 minutes (30 s at the edge)', () => {
    Template.fromStack(api).hasResourceProperties('AWS::ApiGateway::RestApi', {
      EndpointConfiguration: { Types: ['REGIONAL'] },
    })
  })

  it('names the REST API and its stage per deployment, so two deployments in an account keep separate metrics', () => {
    // Act
    const dev = Template.fromStack(synthSample({ stageName: 'dev' }).api)

    // Assess
    Template.fromStack(api).hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'loom-prod' })
    dev.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'loom-dev' })
    dev.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'dev' })
    dev.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: '5XXError',
      Dimensions: Match.arrayWith([{ Name: 'ApiName', Value: 'loom-dev' }]),
    })
  })

  it('alarms on the stage 5xx rate', () => {
    Template.fromStack(api).hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5XXError',
      Statistic: 'Average',
      Threshold: 0.05,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: Match.arrayEquals([
        { Name: 'ApiName', Value: 'loom-prod' },
        { Name: 'Stage', Value: { Ref: Match.stringLikeRegexp('^Stage') } },
      ]),
    })
  })

  it('alarms on the p99 latency of routes that end within 29 s, from the access log, with the long-running streams left out', () => {
    // Prepare
    const template = Template.fromStack(api)
    const streamPaths = FUNCTIONS.filter((f) => f.longRunning).flatMap((f) => f.routes.map((r) => r.path))
    expect(streamPaths).toEqual(['/v1/chat/completions', '/calls/stream_query'])

    // Act
    const filters = Object.values(template.findResources('AWS::Logs::MetricFilter'))
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties)

    // Assess: the filter publishes every access-log line's latency except the long-running streams' (the streamed
    // reads, such as table/query, end within their functions' 29 s and stay in).
    expect(filters).toHaveLength(1)
    const filter = filters[0]?.Properties
    expect(filter.LogGroupName).toEqual({ Ref: expect.stringMatching(/^AccessLogs/) })
    for (const path of streamPaths) expect(filter.FilterPattern).toContain(`$.resourcePath != "${path}"`)
    expect(filter.FilterPattern.match(/\$\.resourcePath !=/g)).toHaveLength(streamPaths.length)
    expect(filter.MetricTransformations).toEqual([
      {
        MetricNamespace: 'Loom',
        MetricName: 'BufferedLatency',
        MetricValue: '$.responseLatency',
        Unit: 'Milliseconds',
        Dimensions: [
          { Key: 'ApiId', Value: '$.apiId' },
          { Key: 'Stage', Value: '$.stage' },
        ],
      },
    ])
    // The access log writes what the filter reads, responseLatency as a number.
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0]?.Properties
    const line = (stage.AccessLogSetting.Format as string).replaceAll(/\$context\.[A-Za-z.]+/g, (m) =>
      m === '$context.responseLatency' ? '12' : 'x',
    )
    expect(JSON.parse(line)).toMatchObject({ apiId: 'x', stage: 'x', resourcePath: 'x', responseLatency: 12 })
    // No alarm reads API Gateway's stage-wide Latency, which long streams inflate.
    expect(alarms.filter((a) => a.MetricName === 'Latency')).toEqual([])
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Loom',
      MetricName: 'BufferedLatency',
      ExtendedStatistic: 'p99',
      Threshold: 5_000,
      Dimensions: Match.arrayEquals([
        { Name: 'ApiId', Value: { Ref: Match.stringLikeRegexp('^Api') } },
        { Name: 'Stage', Value: 'prod' },
      ]),
    })
  })

  it('alarms per long-running streaming function on its p99 duration nearing the 15-minute cap', () => {
    // Prepare
    const streaming = FUNCTIONS.filter((f) => f.longRunning)
    const alarms = Object.values(Template.fromStack(api).findResources('AWS::CloudWatch::Alarm'))
      .map((a) => a.Properties)
      .filter((a) => a.Namespace === 'AWS/Lambda')

    // Assess
    expect(alarms).toHaveLength(streaming.length)
    for (const entry of streaming) {
      const fn = functionOf(api, entry.id)
      // The function's name comes out of its nested stack as an output of that stack.
      const alarm = alarms.find((a) =>
        [Stack.of(fn).node.id, fn.node.id].every((id) => JSON.stringify(a.Dimensions).includes(id)),
      )
      expect(alarm, entry.id).toMatchObject({
        MetricName: 'Duration',
        ExtendedStatistic: 'p99',
        Threshold: 600_000,
      })
    }
  })

  it('notifies an SSL-only topic encrypted with its own rotating key when any alarm fires or clears', () => {
    // Prepare
    const onlyThisAccountsAlarms = {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':cloudwatch:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':alarm:*',
            ],
          ],
        },
      },
    }

    // Act
    const template = Template.fromStack(api)

    // Assess
    const topics = template.findResources('AWS::SNS::Topic')
    expect(Object.keys(topics)).toHaveLength(1)
    const [topicId, topic] = Object.entries(topics)[0] ?? []
    const keyId = Object.keys(template.findResources('AWS::KMS::Key'))[0]
    expect(topic?.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] })
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Condition: onlyThisAccountsAlarms,
          }),
        ]),
      },
    })
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sns:Publish',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Resource: { Ref: topicId },
            Condition: onlyThisAccountsAlarms,
          }),
        ]),
      },
    })
    // CloudWatch may use the key and the topic only for this account's alarms (confused deputy), nothing else may.
    const keyStatements = template.findResources('AWS::KMS::Key')[keyId ?? '']?.Properties.KeyPolicy.Statement as {
      Principal: unknown
      Condition?: unknown
    }[]
    for (const statement of keyStatements.filter((s) => JSON.stringify(s.Principal).includes('cloudwatch')))
      expect(statement.Condition).toEqual(onlyThisAccountsAlarms)
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'))
    expect(alarms).toHaveLength(2 + FUNCTIONS.filter((f) => f.longRunning).length)
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }])
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }])
    }
    template.resourceCountIs('AWS::SNS::Subscription', 0)
    expect(Template.fromStack(api).toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: topicId })
  })

  it('subscribes the alarmEmail prop to the alarm topic', () => {
    // Act
    const template = Template.fromStack(synthSample({ alarmEmail: 'oncall@example.com' }).api)

    // Assess
    template.resourceCountIs('AWS::SNS::Subscription', 1)
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: Match.stringLikeRegexp('^AlarmTopic') },
    })
  })

  it('outputs the stage URL as base_url and the same API under /v1 as inference_base_url', () => {
    // Act
    const outputs = Template.fromStack(api).toJSON().Outputs as Record<string, { Value: unknown }>

    // Assess
    expect(JSON.stringify(outputs.BaseUrl?.Value)).toMatch(/^{"Fn::Join":\["",\["https:\/\/".*\/","?{"Ref":"Stage/)
    expect(JSON.stringify(outputs.InferenceBaseUrl?.Value)).toMatch(/\/v1"\]\]}$/)
  })
})

describe('concurrency isolation', () => {
  const reservedOf = (apiStack: ApiStack, id: string) => {
    const fn = id === 'auth/authorize' ? apiStack.authorizerFunction : functionOf(apiStack, id)
    const resource = templateOf(Stack.of(fn)).toJSON().Resources[
      Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnResource)
    ]
    return resource.Properties as { ReservedConcurrentExecutions?: number; Timeout: number }
  }

  it('reserves 50 for the authorizer (5 s timeout) and caps each long-running streaming function at 100 by default', () => {
    // Act
    const authorizer = reservedOf(api, 'auth/authorize')

    // Assess
    expect(authorizer).toMatchObject({ ReservedConcurrentExecutions: 50, Timeout: 5 })
    for (const entry of FUNCTIONS) {
      expect(reservedOf(api, entry.id).ReservedConcurrentExecutions, entry.id).toBe(entry.longRunning ? 100 : undefined)
    }
  })

  it('takes the reservations per kind and family from props, 0 reserving nothing', () => {
    // Act
    const custom = synthSample({ concurrency: { authorizer: 0, streaming: 20, families: { tracing: 5 } } }).api

    // Assess
    expect(reservedOf(custom, 'auth/authorize').ReservedConcurrentExecutions).toBeUndefined()
    expect(reservedOf(custom, 'inference/create-chat-completion').ReservedConcurrentExecutions).toBe(20)
    expect(reservedOf(custom, 'tracing/stream-query-calls').ReservedConcurrentExecutions).toBe(20)
    expect(reservedOf(custom, 'tracing/start-call').ReservedConcurrentExecutions).toBe(5)
    // A function that streams only its answer is reserved as a buffered one of its family.
    expect(reservedOf(custom, 'tracing/read-obj').ReservedConcurrentExecutions).toBe(5)
    expect(reservedOf(custom, 'inference/list-models').ReservedConcurrentExecutions).toBeUndefined()
  })

  it('warns at synthesis when the reservations would not fit an account with the default 1,000', () => {
    // Prepare: for the sample functions, the reservation per buffered tracing function that takes the total just past
    // the 900 an account with the default 1,000 can reserve (100 stay unreserved), beside the default 50 for the
    // authorizer and 100 per long-running streaming function.
    const streaming = SAMPLE_FUNCTIONS.filter((f) => f.longRunning).length
    const tracing = SAMPLE_FUNCTIONS.filter((f) => f.family === 'tracing' && !f.longRunning).length
    const perFunction = Math.ceil((901 - 50 - 100 * streaming) / tracing)
    expect(perFunction).toBeGreaterThan(0)

    // Act
    const fits = Annotations.fromStack(api).findWarning('*', Match.stringLikeRegexp('reserved concurrent'))
    const tooMany = Annotations.fromStack(
      synthSample({ concurrency: { families: { tracing: perFunction } } }).api,
    ).findWarning('*', Match.stringLikeRegexp('reserved concurrent executions'))

    // Assess
    expect(fits).toEqual([])
    expect(tooMany).toHaveLength(1)
  })
})

describe('WAF (opt-in)', () => {
  it('attaches no web ACL by default', () => {
    Template.fromStack(api).resourceCountIs('AWS::WAFv2::WebACL', 0)
  })

  it('associates a Regional web ACL with a per-IP rate-based rule answering 429 in every family shape', () => {
    // Act
    const template = Template.fromStack(synthSample({ waf: { limit: 1_000 } }).api)

    // Assess
    const acls = Object.entries(template.findResources('AWS::WAFv2::WebACL'))
    expect(acls).toHaveLength(1)
    const [aclId, acl] = acls[0] ?? []
    expect(acl?.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } })
    expect(acl?.Properties.Rules).toEqual([
      expect.objectContaining({
        Name: 'RatePerIp',
        Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: 1_000, EvaluationWindowSec: 300 } },
        Action: {
          Block: {
            CustomResponse: expect.objectContaining({ ResponseCode: 429, CustomResponseBodyKey: 'throttled' }),
          },
        },
      }),
    ])
    const body = JSON.parse(acl?.Properties.CustomResponseBodies.throttled.Content)
    expect(body).toMatchObject({ error: { type: 'RateLimitError', code: 429 }, reason: body.error.message })
    const associations = Object.values(template.findResources('AWS::WAFv2::WebACLAssociation'))
    expect(associations).toHaveLength(1)
    expect(associations[0]?.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] })
    expect(JSON.stringify(associations[0]?.Properties.ResourceArn)).toMatch(/\/restapis\/.*\/stages\//)
    expect(associations[0]?.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^Stage/)]))
  })
})
