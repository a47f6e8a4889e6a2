import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib'
import { AttributeType, Billing, TableV2 } from 'aws-cdk-lib/aws-dynamodb'
import type { Construct } from 'constructs'
import { GLOBAL_INDEXES, PRIMARY_KEY, TTL_ATTRIBUTE } from '../shared/db/table.js'

/** Props of the data stack. */
export type DataStackProps = StackProps & {
  /**
   * Production stages retain the table and turn on deletion protection.
   * @default false
   */
  production?: boolean
}

/** The single DynamoDB table, from the same definition the local stack creates. */
export class DataStack extends Stack {
  readonly table: TableV2

  constructor(scope: Construct, id: string, props: DataStackProps = {}) {
    super(scope, id, props)
    const production = props.production ?? false
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: PRIMARY_KEY.partitionKey, type: AttributeType.STRING },
      sortKey: { name: PRIMARY_KEY.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      globalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
      })),
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // RETAIN and deletion protection in production; dev stacks clean up after themselves.
      deletionProtection: production,
      removalPolicy: production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    })
    // The keys and models CLIs administer the deployed table by this name (LOOM_TABLE_NAME).
    new CfnOutput(this, 'TableName', {
      description: 'LOOM_TABLE_NAME for npm run keys / models',
      value: this.table.tableName,
    })
  }
}
