import { App } from 'aws-cdk-lib'
import { describe, expect, it } from 'vitest'
import { deploySettings } from '../../infra/settings.js'

const settingsOf = (context: Record<string, unknown>) => deploySettings(new App({ context }).node)

describe('deploy settings from CDK context (infra/app.ts)', () => {
  it('protects the table unless the deployment says it is disposable, whatever the stage is called', () => {
    expect(settingsOf({}).production).toBe(true)
    expect(settingsOf({ 'loom:stage': 'dev' }).production).toBe(true)
    expect(settingsOf({ 'loom:stage': 'live', 'loom:production': 'true' }).production).toBe(true)
    expect(settingsOf({ 'loom:stage': 'prod', 'loom:production': 'false' }).production).toBe(false)
    // cdk.json may hold real booleans.
    expect(settingsOf({ 'loom:production': false }).production).toBe(false)
    expect(() => settingsOf({ 'loom:production': 'yes' })).toThrow(/loom:production must be true or false/)
  })

  it('narrows the index projections unless the table predates them (loom:allProjectedIndexes)', () => {
    expect(settingsOf({}).allProjectedIndexes).toBe(false)
    expect(settingsOf({ 'loom:allProjectedIndexes': 'true' }).allProjectedIndexes).toBe(true)
    expect(settingsOf({ 'loom:allProjectedIndexes': true }).allProjectedIndexes).toBe(true)
    expect(() => settingsOf({ 'loom:allProjectedIndexes': 'all' })).toThrow(/must be true or false/)
  })

  it("keeps the region's API Gateway logging role by default; loom:apiGatewayCloudWatchRole=false leaves it alone", () => {
    expect(settingsOf({}).api.cloudWatchRole).toBeUndefined()
    expect(settingsOf({ 'loom:apiGatewayCloudWatchRole': 'false' }).api.cloudWatchRole).toBe(false)
    expect(settingsOf({ 'loom:apiGatewayCloudWatchRole': false }).api.cloudWatchRole).toBe(false)
    expect(settingsOf({ 'loom:apiGatewayCloudWatchRole': 'true' }).api.cloudWatchRole).toBe(true)
    expect(() => settingsOf({ 'loom:apiGatewayCloudWatchRole': 'no' })).toThrow(/must be true or false/)
  })

  it('names the API stage after the deployment stage, and leaves WAF and reservations at their defaults', () => {
    // Act
    const settings = settingsOf({})

    // Assess
    expect(settings.stage).toBe('dev')
    expect(settings.api).toEqual({ stageName: 'dev', concurrency: {} })
  })

  it('reads the reservations per kind and family, the WAF switch and its limit, and the other keys', () => {
    // Act
    const settings = settingsOf({
      'loom:stage': 'prod',
      'loom:reservedConcurrency:authorizer': '0',
      'loom:reservedConcurrency:streaming': '40',
      'loom:reservedConcurrency:tracing': '5',
      'loom:waf': 'true',
      'loom:wafRateLimit': '2000',
      'loom:alarmEmail': 'oncall@example.com',
      'loom:secretNamePrefix': 'team-a/',
    })

    // Assess
    expect(settings.api).toEqual({
      stageName: 'prod',
      concurrency: { authorizer: 0, streaming: 40, families: { tracing: 5 } },
      waf: { limit: 2000 },
      alarmEmail: 'oncall@example.com',
      secretNamePrefix: 'team-a/',
    })
    expect(settingsOf({ 'loom:waf': 'false', 'loom:wafRateLimit': '2000' }).api.waf).toBeUndefined()
    expect(() => settingsOf({ 'loom:reservedConcurrency:streaming': '-1' })).toThrow(/whole number/)
  })
})
