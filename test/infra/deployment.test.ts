import { Stack } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import {
  type CfnAuthorizer,
  type CfnGatewayResponse,
  CfnMethod,
  type CfnRestApi,
  ResponseType,
} from 'aws-cdk-lib/aws-apigateway'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda'
import { describe, expect, it } from 'vitest'
import type { FunctionEntry } from '#functions/manifest'
import { ApiStack, type ApiStackProps } from '../../infra/api-stack.js'
import { DataStack } from '../../infra/data-stack.js'
import { SAMPLE_FUNCTIONS, testApp } from '../support/cdk.js'

type Change = (api: ApiStack) => void

/** Synthesises the API stack (bundling skipped), applies `change` before synthesis, and returns its template. */
function synth(props: Omit<ApiStackProps, 'table'> = {}, change: Change = () => undefined) {
  const app = testApp()
  const data = new DataStack(app, 'Data')
  const api = new ApiStack(app, 'Api', { table: data.table as unknown as ITable, ...props })
  change(api)
  return { api, template: Template.fromStack(api).toJSON() as { Resources: Record<string, Resource> } }
}

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }

function deploymentIdIn(template: ReturnType<typeof synth>['template']): string {
  const ids = Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::ApiGateway::Deployment')
    .map(([id]) => id)
  expect(ids).toHaveLength(1)
  return ids[0] ?? ''
}

function deploymentIdOf(props: Omit<ApiStackProps, 'table'> = {}, change?: Change): string {
  return deploymentIdIn(synth(props, change).template)
}

/**
 * Props deploying the sample functions (test/support/cdk.ts: one per route stack and kind of route) instead of the
 * whole manifest. The hash covers every API resource whatever the functions are, so whether a change rotates the
 * deployment shows on the sample as on all functions, at a third of the synth time; `props` may replace `functions`.
 */
function sampled(props: Omit<ApiStackProps, 'table'> = {}): Omit<ApiStackProps, 'table'> {
  return { functions: SAMPLE_FUNCTIONS, ...props }
}

/** The sample functions with entry `id` edited. */
function withEntry(id: string, edit: (entry: FunctionEntry) => FunctionEntry): FunctionEntry[] {
  expect(SAMPLE_FUNCTIONS.some((f) => f.id === id)).toBe(true)
  return SAMPLE_FUNCTIONS.map((f) => (f.id === id ? edit(f) : f))
}

/** The L1 resource of the construct `id` under `scope`. */
function child<T>(scope: Stack | ApiStack['api'], id: string): T {
  return scope.node.findChild(id).node.defaultChild as T
}

// The whole manifest, synthesised once: the baseline of an unchanged synth and the app the dependency test reads.
const full = synth()
const fullBaseline = deploymentIdIn(full.template)
// The sample's deployment, which every change below is compared with.
const baseline = deploymentIdOf(sampled())

describe('the deployment the stage serves (a second cdk deploy takes effect)', () => {
  it('keeps the same deployment for an unchanged synth, and for changes outside the API definition', () => {
    expect(deploymentIdOf()).toBe(fullBaseline)
    expect(deploymentIdOf(sampled({ alarmEmail: 'oncall@example.com', serverErrorRateThreshold: 0.2 }))).toBe(baseline)
    // A function's own settings (and code) are not part of the API: its integration URI names the function, not them.
    const memory = deploymentIdOf(sampled(), (api) => {
      const fn = api.functions.get('tracing/start-call')?.node.defaultChild as CfnFunction | undefined
      if (fn === undefined) throw new Error('no tracing/start-call')
      fn.memorySize = 2048
    })
    expect(memory).toBe(baseline)
  })

  it.each<[string, Omit<ApiStackProps, 'table'>, Change?]>([
    [
      'a route added to a function',
      {
        functions: withEntry('meta/get-health', (f) => ({
          ...f,
          routes: [...f.routes, { method: 'GET', path: '/healthz' }],
        })),
      },
    ],
    [
      'a buffered integration switched to streaming',
      { functions: withEntry('tracing/start-call', (f) => ({ ...f, stream: true })) },
    ],
    [
      'a public route put behind the authorizer',
      { functions: withEntry('meta/get-health', (f) => ({ ...f, auth: true })) },
    ],
    [
      "a gateway response's body",
      {},
      (api) => {
        child<CfnGatewayResponse>(api.api, 'Throttled').responseTemplates = {
          'application/json': '{"error":"slow down"}',
        }
      },
    ],
    [
      'a gateway response added',
      {},
      (api) => {
        api.api.addGatewayResponse('Forbidden', { type: ResponseType.ACCESS_DENIED, statusCode: '403' })
      },
    ],
    [
      'the binary media types',
      {},
      (api) => {
        ;(api.api.node.defaultChild as CfnRestApi).binaryMediaTypes = ['application/octet-stream']
      },
    ],
    [
      "the authorizer's cache TTL",
      {},
      (api) => {
        child<CfnAuthorizer>(api, 'KeyAuthorizer').authorizerResultTtlInSeconds = 60
      },
    ],
    [
      "the authorizer's identity source",
      {},
      (api) => {
        child<CfnAuthorizer>(api, 'KeyAuthorizer').identitySource = 'method.request.header.X-Api-Key'
      },
    ],
    [
      'the endpoint type',
      {},
      (api) => {
        ;(api.api.node.defaultChild as CfnRestApi).endpointConfiguration = { types: ['EDGE'] }
      },
    ],
    [
      "an integration's timeout inside a nested route stack",
      {},
      (api) => {
        const method = methodsOf(api).find((m) => m.httpMethod === 'POST')
        if (method === undefined) throw new Error('no POST method')
        method.addPropertyOverride('Integration.TimeoutInMillis', 10_000)
      },
    ],
  ])('makes a new deployment when %s changes', (_what, props, change) => {
    expect(deploymentIdOf(sampled(props), change)).not.toBe(baseline)
  })

  it('points the stage at the deployment and creates it after every method, the authorizer and gateway responses', () => {
    // Act: the whole manifest's synth (the baseline above), so every route stack is checked.
    const { api, template } = full
    const resources = Object.entries(template.Resources)
    const [deploymentId, deployment] = resources.find(([, r]) => r.Type === 'AWS::ApiGateway::Deployment') ?? []
    const stage = resources.find(([, r]) => r.Type === 'AWS::ApiGateway::Stage')?.[1]

    // Assess: the stage serves this deployment.
    expect(stage?.Properties.DeploymentId).toEqual({ Ref: deploymentId })
    // Every nested stack holding methods is created (with its methods) before the deployment snapshots the API.
    const routeStacks = api.node
      .findAll()
      .filter((c): c is Stack => c instanceof Stack && c !== api)
      .filter((s) => Object.keys(Template.fromStack(s).findResources('AWS::ApiGateway::Method')).length > 0)
    expect(routeStacks.length).toBeGreaterThanOrEqual(4)
    const nestedStackIds = resources
      .filter(([, r]) => r.Type === 'AWS::CloudFormation::Stack')
      .map(([id]) => id)
      .filter((id) => routeStacks.some((s) => id.startsWith(s.node.id)))
    expect(nestedStackIds).toHaveLength(routeStacks.length)
    const own = resources
      .filter(([, r]) =>
        ['AWS::ApiGateway::Method', 'AWS::ApiGateway::Authorizer', 'AWS::ApiGateway::GatewayResponse'].includes(r.Type),
      )
      .map(([id]) => id)
    expect(own.length).toBeGreaterThanOrEqual(5)
    expect(deployment?.DependsOn).toEqual(expect.arrayContaining([...nestedStackIds, ...own]))
  })
})

/** The methods of the nested route stacks. */
function methodsOf(api: ApiStack): CfnMethod[] {
  return api.node
    .findAll()
    .filter((c): c is CfnMethod => c instanceof CfnMethod)
    .filter((m) => Stack.of(m) !== api)
}
