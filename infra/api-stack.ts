import { Duration, NestedStack, Stack, type StackProps } from 'aws-cdk-lib'
import {
  AuthorizationType,
  Deployment,
  type IAuthorizer,
  IdentitySource,
  type IRestApi,
  LambdaIntegration,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseTransferMode,
  RestApi,
  Stage,
} from 'aws-cdk-lib/aws-apigateway'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
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
}

type FamilyProps = {
  family: FunctionEntry['family']
  api: { restApiId: string; rootResourceId: string }
  authorizer: IAuthorizer
  table: ITable
}

/** The functions and routes of one route family, in a nested stack to stay far below CloudFormation's 500 resources. */
class FamilyStack extends NestedStack {
  readonly functions: HttpFunction[] = []

  constructor(scope: Construct, id: string, props: FamilyProps) {
    super(scope, id)
    const api: IRestApi = RestApi.fromRestApiAttributes(this, 'Api', {
      restApiId: props.api.restApiId,
      rootResourceId: props.api.rootResourceId,
    })
    for (const entry of FUNCTIONS.filter((f) => f.family === props.family)) {
      const name = entry.id.split('/').at(-1) ?? entry.id
      const fn = new HttpFunction(this, pascal(name), {
        functionId: entry.id,
        ...(entry.stream ? { timeout: Duration.minutes(15), memorySize: 1024 } : {}),
      })
      // Every authenticated function resolves keys itself when invoked directly, so it reads the table at least.
      if (entry.access !== 'none' || entry.auth)
        fn.bindTable({ table: props.table, accessMode: entry.access === 'write' ? 'write' : 'read' })
      const integration = new LambdaIntegration(fn, {
        proxy: true,
        ...(entry.stream ? { responseTransferMode: ResponseTransferMode.STREAM, timeout: Duration.minutes(15) } : {}),
      })
      for (const route of entry.routes) {
        const resource = api.root.resourceForPath(route.path.replace(/:([A-Za-z_]+)/g, '{$1}'))
        resource.addMethod(
          route.method,
          integration,
          entry.auth ? { authorizer: props.authorizer, authorizationType: AuthorizationType.CUSTOM } : {},
        )
      }
      this.functions.push(fn)
    }
  }
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
  readonly families: Record<string, FamilyStack> = {}

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props)
    this.api = new RestApi(this, 'Api', { restApiName: 'loom', deploy: false, cloudWatchRole: true })
    this.api.root.addMethod('ANY') // a REST API needs at least one method in its own stack to be valid

    const authorizerFn = new HttpFunction(this, 'Authorizer', { functionId: 'auth/authorize', memorySize: 256 })
    authorizerFn.bindTable({ table: props.table, accessMode: 'read' })
    // Only Authorization is an identity source: a missing optional project header would otherwise be a 401. The
    // short cache keeps revocation effective within seconds; functions re-check the project header themselves.
    const authorizer = new RequestAuthorizer(this, 'KeyAuthorizer', {
      handler: authorizerFn,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(5),
    })

    // exactOptionalPropertyTypes is stricter than aws-cdk-lib's own declarations; the construct is an IRestApi.
    const restApi = this.api as unknown as IRestApi
    authorizer._attachToApi(restApi)
    // Nested stacks get the authorizer by id only: attaching the construct to their imported API would bind it twice.
    const authorizerRef: IAuthorizer = {
      authorizerId: authorizer.authorizerId,
      authorizationType: AuthorizationType.CUSTOM,
    }
    const deployment = new Deployment(this, 'Deployment', { api: restApi })
    for (const family of ['meta', 'inference', 'training', 'tracing'] as const) {
      if (!FUNCTIONS.some((f) => f.family === family)) continue
      const stack = new FamilyStack(this, `${pascal(family)}Routes`, {
        family,
        api: { restApiId: this.api.restApiId, rootResourceId: this.api.restApiRootResourceId },
        authorizer: authorizerRef,
        table: props.table,
      })
      deployment.node.addDependency(stack)
      this.families[family] = stack
    }
    new Stage(this, 'Stage', {
      deployment,
      stageName: props.stageName ?? 'prod',
      tracingEnabled: true,
      loggingLevel: MethodLoggingLevel.INFO,
      throttlingRateLimit: 1_000,
      throttlingBurstLimit: 2_000,
    })
  }
}
