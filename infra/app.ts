import { App, Validations } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import nag from 'cdk-nag'
import { ApiStack } from './api-stack.js'
import { DataStack } from './data-stack.js'

const app = new App()
const stage = String(app.node.tryGetContext('loom:stage') ?? 'dev')
const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key)
  return typeof value === 'string' && value !== '' ? value : undefined
}
const data = new DataStack(app, `Loom-${stage}-Data`, { production: stage === 'prod' })
const secretNamePrefix = context('loom:secretNamePrefix')
const secretsExtensionLayerArn = context('loom:secretsExtensionLayerArn')
const alarmEmail = context('loom:alarmEmail')
new ApiStack(app, `Loom-${stage}-Api`, {
  table: data.table as unknown as ITable,
  ...(secretNamePrefix === undefined ? {} : { secretNamePrefix }),
  ...(secretsExtensionLayerArn === undefined ? {} : { secretsExtensionLayerArn }),
  ...(alarmEmail === undefined ? {} : { alarmEmail }),
})
// AwsSolutions violations fail synth; justified exceptions are acknowledged next to the construct they concern.
Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app))
app.synth()
