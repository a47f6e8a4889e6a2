import { App } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { ApiStack } from './api-stack.js'
import { DataStack } from './data-stack.js'

const app = new App()
const stage = String(app.node.tryGetContext('loom:stage') ?? 'dev')
const data = new DataStack(app, `Loom-${stage}-Data`, { production: stage === 'prod' })
new ApiStack(app, `Loom-${stage}-Api`, { table: data.table as unknown as ITable })
app.synth()
