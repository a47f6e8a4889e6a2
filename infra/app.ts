import { App, Validations } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import nag from 'cdk-nag'
import { ApiStack } from './api-stack.js'
import { DataStack } from './data-stack.js'
import { deploySettings } from './settings.js'

const app = new App()
// Context keys and defaults: infra/settings.ts (README, Deploy).
const settings = deploySettings(app.node)
const data = new DataStack(app, `Loom-${settings.stage}-Data`, {
  production: settings.production,
  allProjectedIndexes: settings.allProjectedIndexes,
})
new ApiStack(app, `Loom-${settings.stage}-Api`, { table: data.table as unknown as ITable, ...settings.api })
// AwsSolutions violations fail synth; justified exceptions are acknowledged next to the construct they concern.
Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app))
app.synth()
