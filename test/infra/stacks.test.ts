import { App, type NestedStack } from 'aws-cdk-lib'
import { Match, Template } from 'aws-cdk-lib/assertions'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { describe, expect, it } from 'vitest'
import { FUNCTIONS } from '#functions/manifest'
import { GLOBAL_INDEXES } from '#shared/db/table'
import { ApiStack } from '../../infra/api-stack.js'
import { DataStack } from '../../infra/data-stack.js'

function synth() {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } })
  const data = new DataStack(app, 'Data', { production: true })
  const api = new ApiStack(app, 'Api', { table: data.table as unknown as ITable })
  return { data, api }
}

const { data, api } = synth()
const families = Object.entries(api.families) as [string, NestedStack][]

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
  })
})

describe('ApiStack', () => {
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

  it('wires every route, with the REQUEST authorizer on every route except public ones', () => {
    for (const entry of FUNCTIONS) {
      const stack = api.families[entry.family]
      if (stack === undefined) throw new Error(`no stack for ${entry.family}`)
      const template = Template.fromStack(stack)
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

  it('keeps every stack far below the CloudFormation resource limit', () => {
    for (const stack of [data, api, ...families.map(([, s]) => s)]) {
      const resources = Object.keys(Template.fromStack(stack).toJSON().Resources ?? {}).length
      expect(resources).toBeLessThan(400)
    }
  })
})
