import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda'
import type { LambdaEvent } from 'hono/aws-lambda'

/** Options for a REST API (v1) proxy event. */
export type RestEventOptions = {
  method?: string
  path: string
  headers?: Record<string, string>
  query?: Record<string, string>
  body?: string
  authorizer?: Record<string, string>
}

/** An API Gateway REST proxy event as Lambda receives it (typed for Hono's adapter). */
export function restEvent(options: RestEventOptions): LambdaEvent {
  return restProxyEvent(options) as unknown as LambdaEvent
}

/** The same event typed as `aws-lambda` declares it. */
export function restProxyEvent(options: RestEventOptions): APIGatewayProxyEvent {
  const headers = options.headers ?? {}
  return {
    httpMethod: options.method ?? 'GET',
    path: options.path,
    resource: options.path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: options.query ?? null,
    multiValueQueryStringParameters: options.query
      ? Object.fromEntries(Object.entries(options.query).map(([k, v]) => [k, [v]]))
      : null,
    pathParameters: null,
    stageVariables: null,
    body: options.body ?? null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api123',
      authorizer: options.authorizer ?? null,
      httpMethod: options.method ?? 'GET',
      identity: { sourceIp: '127.0.0.1' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/prod${options.path}`,
      protocol: 'HTTP/1.1',
      requestId: 'req-1',
      requestTimeEpoch: Date.now(),
      resourceId: 'res1',
      resourcePath: options.path,
      stage: 'prod',
    },
  }
}

/** An API Gateway REQUEST authorizer event. */
export function authorizerEvent(path: string, headers: Record<string, string>): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:us-east-1:123456789012:api123/prod/POST${path}`,
    resource: path,
    path,
    httpMethod: 'POST',
    headers,
    multiValueHeaders: null,
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
  }
}

/** A minimal Lambda context. */
export function lambdaContext(): Context {
  return {
    awsRequestId: 'lambda-req-1',
    functionName: 'loom-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:loom-test',
    memoryLimitInMB: '256',
    logGroupName: '/aws/lambda/loom-test',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }
}
