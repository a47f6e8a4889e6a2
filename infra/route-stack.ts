import { ArnFormat, Duration, NestedStack, Stack, Validations } from 'aws-cdk-lib'
import {
  AuthorizationType,
  type IAuthorizer,
  type IResource,
  type IRestApi,
  LambdaIntegration,
  Resource,
  ResponseTransferMode,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { PolicyStatement } from 'aws-cdk-lib/aws-iam'
import { ParamsAndSecretsLayerVersion, ParamsAndSecretsVersions } from 'aws-cdk-lib/aws-lambda'
import type { Construct } from 'constructs'
import type { FunctionEntry } from '../functions/manifest.js'
import { CONSOLE_COMMAND_HOOKS, CONSOLE_FUNCTION_ID } from './console-bundling.js'
import { HttpFunction } from './constructs/http-function.js'
import { PRICED_FUNCTION_IDS, PRICES_COMMAND_HOOKS } from './prices-bundling.js'

/** Functions that resolve `secret:<id>` credential references (shared/inference/credentials.ts). */
const SECRET_READERS = new Set(['inference/create-chat-completion'])

/**
 * Areas of a family that get a nested stack of their own, by the first segment of a function's first route. A
 * nested stack holds about 8.5 resources per function (function, role, policy, log group, method, resources, two
 * invoke permissions per route): the tracing family in one stack reached 366 of CloudFormation's 500. A function
 * whose route matches no area (a new one, OTel ingest, console reads) lands in its family's `<Family>Routes` stack,
 * so nothing has to be listed here for a deploy to work; `test/infra/stacks.test.ts` keeps every stack under 300.
 * Moving a function to another stack replaces it (a new function and log group), so areas are added, not renamed.
 */
const ROUTE_AREAS: Partial<Record<FunctionEntry['family'], Record<string, string>>> = {
  tracing: {
    call: 'Calls',
    calls: 'Calls',
    trace: 'Calls',
    cost: 'Calls',
    obj: 'Objects',
    objs: 'Objects',
    tags: 'Objects',
    aliases: 'Objects',
    table: 'Objects',
    file: 'Objects',
    files: 'Objects',
    refs: 'Objects',
    feedback: 'Feedback',
    annotation_queues: 'Feedback',
  },
}

/** The nested stack (construct id) that serves a function: `<Family><Area>Routes`, e.g. `TracingCallsRoutes`. */
export function routeStackIdOf(entry: FunctionEntry): string {
  const segment = entry.routes[0]?.path.split('/')[1] ?? ''
  return `${pascal(entry.family)}${ROUTE_AREAS[entry.family]?.[segment] ?? ''}Routes`
}

/** Reserved concurrency per function kind; 0 or absent reserves nothing (the function draws on the account pool). */
export type ConcurrencySettings = {
  /**
   * Reserved for the authorizer: a floor the other functions (15-minute streams first) cannot take away, and also its
   * ceiling. 50 covers the stage's 1,000 requests/s throttle with every request missing the cache at ~50 ms each.
   * @default 50
   */
  authorizer?: number
  /**
   * Reserved for each long-running streaming function (`longRunning`), which caps how many 15-minute streams can hold
   * the account's pool. Functions that only stream their answer (the large tracing reads) are buffered ones here.
   * @default 100
   */
  streaming?: number
  /**
   * Reserved for each buffered function of a family (tracing has ~45 functions: 10 here reserves 450).
   * @default - none: buffered functions share the account's unreserved pool
   */
  families?: Partial<Record<FunctionEntry['family'], number>>
}

/** The defaults of `ConcurrencySettings`: 250 of a fresh account's 1,000, leaving 750 unreserved. */
export const DEFAULT_CONCURRENCY = { authorizer: 50, streaming: 100 } as const

/** The reserved concurrency of one function under `settings`, undefined for none. */
export function reservedConcurrencyOf(entry: FunctionEntry, settings: ConcurrencySettings = {}): number | undefined {
  const reserved = entry.longRunning
    ? (settings.streaming ?? DEFAULT_CONCURRENCY.streaming)
    : (settings.families?.[entry.family] ?? 0)
  return reserved > 0 ? reserved : undefined
}

export type RouteStackProps = {
  entries: readonly FunctionEntry[]
  api: { restApiId: string; rootResourceId: string }
  /**
   * API resources created by the API stack, by path (`/v1`), for path segments several route stacks share: each stack
   * adds its routes below the deepest of these, never creating a shared segment itself (two nested stacks each creating
   * `/v1` fail the deploy: API Gateway refuses a second resource with the same parent and path part).
   */
  sharedResources?: ReadonlyMap<string, string>
  authorizer: IAuthorizer
  table: ITable
  secrets: { namePrefix: string; layerArn: string | undefined }
  concurrency: ConcurrencySettings
}

/** The functions and routes of one area of a route family, in a nested stack to stay far below 500 resources. */
export class RouteStack extends NestedStack {
  /** The stack's functions by manifest id. */
  readonly functions = new Map<string, HttpFunction>()

  constructor(scope: Construct, id: string, props: RouteStackProps) {
    super(scope, id)
    const api: IRestApi = RestApi.fromRestApiAttributes(this, 'Api', {
      restApiId: props.api.restApiId,
      rootResourceId: props.api.rootResourceId,
    })
    for (const entry of props.entries) {
      const name = entry.id.split('/').at(-1) ?? entry.id
      const reserved = reservedConcurrencyOf(entry, props.concurrency)
      const fn = new HttpFunction(this, pascal(name), {
        functionId: entry.id,
        // Streaming alone (the tracing reads whose answers may pass Lambda's 6 MB) keeps the 29 s and 512 MB defaults.
        ...(entry.longRunning ? { timeout: Duration.minutes(15), memorySize: 1024 } : {}),
        ...(reserved === undefined ? {} : { reservedConcurrentExecutions: reserved }),
        // The console function ships the built console in its asset (infra/console-bundling.ts).
        ...(entry.id === CONSOLE_FUNCTION_ID ? { bundling: { commandHooks: CONSOLE_COMMAND_HOOKS } } : {}),
        // Functions that price calls ship the default price table in their asset (infra/prices-bundling.ts).
        ...(PRICED_FUNCTION_IDS.has(entry.id) ? { bundling: { commandHooks: PRICES_COMMAND_HOOKS } } : {}),
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
      // A streamed answer has no 6 MB bound; only a long-running stream needs more than the default 29 s integration
      // timeout, which the other streamed functions' own 29 s timeout matches.
      const integration = new LambdaIntegration(fn, {
        proxy: true,
        ...(entry.stream ? { responseTransferMode: ResponseTransferMode.STREAM } : {}),
        ...(entry.longRunning ? { timeout: Duration.minutes(15) } : {}),
      })
      for (const route of entry.routes) {
        const method = this.resourceFor(api, apiPath(route.path), props.sharedResources ?? new Map()).addMethod(
          route.method,
          integration,
          entry.auth ? { authorizer: props.authorizer, authorizationType: AuthorizationType.CUSTOM } : {},
        )
        if (!entry.auth)
          Validations.of(method).acknowledge({
            id: 'AwsSolutions-APIG4',
            reason:
              'Public by contract (health, server info, OpenAPI document, the console page): the manifest marks it auth: false.',
          })
      }
      this.functions.set(entry.id, fn)
    }
  }

  private readonly imported = new Map<string, IResource>()

  // The resource of `path`, created below the deepest shared resource that is a prefix of it (imported by id).
  private resourceFor(api: IRestApi, path: string, shared: ReadonlyMap<string, string>): IResource {
    const segments = path.split('/').filter((s) => s !== '')
    for (let n = segments.length; n > 0; n--) {
      const prefix = `/${segments.slice(0, n).join('/')}`
      const resourceId = shared.get(prefix)
      if (resourceId === undefined) continue
      let parent = this.imported.get(prefix)
      if (parent === undefined) {
        const id = `Shared${prefix.replace(/[^A-Za-z0-9]/g, '_')}`
        parent = Resource.fromResourceAttributes(this, id, { restApi: api, resourceId, path: prefix })
        this.imported.set(prefix, parent)
      }
      const rest = segments.slice(n).join('/')
      return rest === '' ? parent : parent.resourceForPath(rest)
    }
    return api.root.resourceForPath(path)
  }
}

/** A manifest path (`/objs/:object_id`) as an API Gateway resource path (`/objs/{object_id}`). */
/**
 * The path prefixes (`/v1`, `/v1/preview`, in API Gateway's form) that routes of more than one route stack share: the
 * API stack creates these resources once, and each route stack adds its routes below them (`sharedResources`).
 */
export function sharedPrefixes(byStack: ReadonlyMap<string, readonly FunctionEntry[]>): string[] {
  const stacksOf = new Map<string, Set<string>>()
  for (const [stackId, entries] of byStack) {
    for (const route of entries.flatMap((e) => e.routes)) {
      const segments = apiPath(route.path)
        .split('/')
        .filter((s) => s !== '')
      for (let n = 1; n <= segments.length; n++) {
        const prefix = `/${segments.slice(0, n).join('/')}`
        stacksOf.set(prefix, (stacksOf.get(prefix) ?? new Set()).add(stackId))
      }
    }
  }
  return [...stacksOf].filter(([, stacks]) => stacks.size > 1).map(([prefix]) => prefix)
}

export function apiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}')
}

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

export function pascal(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase())
}
