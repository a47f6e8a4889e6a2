import type { Node } from 'constructs'
import type { FunctionEntry } from '../functions/manifest.js'
import type { ApiStackProps } from './api-stack.js'
import type { ConcurrencySettings } from './route-stack.js'

/** What `infra/app.ts` deploys, read from CDK context (`-c key=value` or `cdk.json`). */
export type DeploySettings = {
  stage: string
  /** Retain the table and turn on deletion protection. */
  production: boolean
  /** Keep `ALL` on every index of a table deployed before the indexes were narrowed (`loom:allProjectedIndexes`). */
  allProjectedIndexes: boolean
  api: Omit<ApiStackProps, 'table'>
}

const FAMILIES: readonly FunctionEntry['family'][] = ['meta', 'inference', 'training', 'tracing']

/**
 * Reads the deployment settings from context. Production safety does not hang on the stage's name: the table is
 * retained and deletion-protected unless `loom:production=false` says the deployment is disposable.
 */
export function deploySettings(node: Node): DeploySettings {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key)
    if (value === undefined || value === null || value === '') return undefined
    return String(value)
  }
  const flag = (key: string): boolean | undefined => {
    const value = text(key)
    if (value === undefined) return undefined
    if (value === 'true' || value === 'false') return value === 'true'
    throw new Error(`context ${key} must be true or false, not ${JSON.stringify(value)}`)
  }
  const count = (key: string): number | undefined => {
    const value = text(key)
    if (value === undefined) return undefined
    const parsed = Number(value)
    if (!Number.isInteger(parsed) || parsed < 0)
      throw new Error(`context ${key} must be a whole number ≥ 0, not ${JSON.stringify(value)}`)
    return parsed
  }
  const stage = text('loom:stage') ?? 'dev'
  const concurrency: ConcurrencySettings = {}
  const authorizer = count('loom:reservedConcurrency:authorizer')
  if (authorizer !== undefined) concurrency.authorizer = authorizer
  const streaming = count('loom:reservedConcurrency:streaming')
  if (streaming !== undefined) concurrency.streaming = streaming
  for (const family of FAMILIES) {
    const reserved = count(`loom:reservedConcurrency:${family}`)
    if (reserved !== undefined) concurrency.families = { ...concurrency.families, [family]: reserved }
  }
  const wafLimit = count('loom:wafRateLimit')
  const optional = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>
  return {
    stage,
    production: flag('loom:production') ?? true,
    allProjectedIndexes: flag('loom:allProjectedIndexes') ?? false,
    api: {
      stageName: stage,
      concurrency,
      ...optional('secretNamePrefix', text('loom:secretNamePrefix')),
      ...optional('secretsExtensionLayerArn', text('loom:secretsExtensionLayerArn')),
      ...optional('alarmEmail', text('loom:alarmEmail')),
      ...optional('cloudWatchRole', flag('loom:apiGatewayCloudWatchRole')),
      ...(flag('loom:waf') === true ? { waf: wafLimit === undefined ? {} : { limit: wafLimit } } : {}),
    },
  }
}
